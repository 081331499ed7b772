import { createAdmissionVerifier, VerifiedTokens } from '@onsale/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, type TestIdentity } from '../../test/support/identity';

let identity: TestIdentity;
beforeAll(async () => {
  identity = await startIdentity();
});
afterAll(async () => {
  await identity?.close();
});

const grant = { sub: 'buyer-1', eventId: '00000000-0000-4000-8000-000000000001', purchaseCell: 'cell-1' };

describe('verified admission tokens are cached by their exact text until exp', () => {
  it('a cached token is still a hit; a forgery carrying its jti is not', async () => {
    const verify = createAdmissionVerifier(identity.admissionJwksUrl, 60_000);
    const jti = 'jti-shared';
    const token = await identity.admissionToken({ ...grant, jti });
    expect(await verify(token)).toMatchObject({ ok: true, claims: { jti } });
    expect(await verify(token)).toMatchObject({ ok: true, claims: { jti } });
    const forged = await identity.forgedAdmissionToken({ ...grant, jti });
    expect(await verify(forged)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('a cached token is refused once it expires', async () => {
    const verify = createAdmissionVerifier(identity.admissionJwksUrl, 60_000);
    const token = await identity.admissionToken({ ...grant, expiresInSeconds: 2 });
    expect((await verify(token)).ok).toBe(true);
    const exp = JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()).exp as number;
    await new Promise((r) => setTimeout(r, exp * 1000 - Date.now() + 50));
    expect(await verify(token)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('an entry lives at most maxAgeMs after its check, and the oldest goes first when full', () => {
    const cache = new VerifiedTokens<string>({ maxAgeMs: 1_000, maxEntries: 2 });
    cache.set('a', 'A', 100, 0);
    expect(cache.get('a', 999)).toBe('A');
    expect(cache.get('a', 1_000)).toBeUndefined();
    cache.set('b', 'B', 2, 0);
    expect(cache.get('b', 1_500)).toBeUndefined(); // exp (2 s) is later, but the age bound (1 s) comes first
    cache.set('c', 'C', 1, 500);
    expect(cache.get('c', 999)).toBe('C');
    expect(cache.get('c', 1_000)).toBeUndefined(); // exp 1 s comes before the age bound
    cache.set('x', 'X', undefined, 0);
    cache.set('y', 'Y', undefined, 0);
    cache.set('z', 'Z', undefined, 0);
    expect([cache.get('x', 1), cache.get('y', 1), cache.get('z', 1)]).toEqual([undefined, 'Y', 'Z']);
  });
});
