import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../scripts/local-platform/launch';
import { createHarness, type Harness } from '../../test/support/control-plane';

describe('identity tokens', () => {
  let h: Harness;
  let keysOutOfReach: Harness;
  beforeAll(async () => {
    h = await createHarness();
    // Nothing listens there: the provider's JWKS cannot be fetched.
    keysOutOfReach = await createHarness({
      env: { IDENTITY_JWKS_URL: `http://127.0.0.1:${await freePort()}/.well-known/jwks.json` },
    });
  });
  afterAll(async () => {
    await h?.close();
    await keysOutOfReach?.close();
  });

  it('a provider whose keys are out of reach is a 503 to retry, not a 401 that sends buyers to sign in again', async () => {
    const token = await keysOutOfReach.identity.buyer('b-outage');
    const res = await keysOutOfReach.req('GET', '/events', { token });
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe('identity_unavailable');
    expect(res.headers.get('retry-after')).toBe('5');
  });

  it('a token whose signature does not hold is still a 401 while the keys are in reach', async () => {
    const token = await h.identity.buyer('b-forged');
    const [head, payload] = token.split('.');
    const res = await h.req('GET', '/events', { token: `${head}.${payload}.${'A'.repeat(342)}` });
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe('unauthenticated');
  });

  it('a verified token is remembered by the injected clock for a minute, then checked again', async () => {
    const token = await h.identity.buyer('b-cache');
    expect(h.services.identity.isKnown(token)).toBe(false);
    await expect(h.services.identity.verify(token)).resolves.toMatchObject({ sub: 'b-cache' });
    expect(h.services.identity.isKnown(token)).toBe(true);
    h.clock.advance(59_000);
    expect(h.services.identity.isKnown(token)).toBe(true);
    h.clock.advance(2_000);
    expect(h.services.identity.isKnown(token)).toBe(false);
  });
});
