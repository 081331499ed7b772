import { describe, expect, it } from 'vitest';
import { createDeviceKey, dpopProof } from '../src/device-proof';
import { accessTokenHash, checkDpopProof, DPOP_JTI_TTL_SECONDS, RecentProofs } from '../src/dpop';

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const url = 'https://tickets.example/events/e1/holds';
const token = 'h.p.s';

describe('a DPoP proof (RFC 9449) against a bound admission token', () => {
  it('passes when made by the bound key for this request, and names its jti', async () => {
    const key = await createDeviceKey();
    const proof = await dpopProof(key, { method: 'post', url: `${url}?x=1`, accessToken: token, jti: 'jti-12345678' });
    const now = Math.floor(Date.now() / 1000);
    expect(
      checkDpopProof(proof, {
        jkt: key.jkt,
        accessToken: token,
        method: 'POST',
        path: '/events/e1/holds',
        host: 'tickets.example',
        nowSeconds: now,
      }),
    ).toEqual({ ok: true, jti: 'jti-12345678' });
  });

  it('refuses an unsigned (alg none) proof, an HMAC one, and one whose header carries a private key', async () => {
    const key = await createDeviceKey();
    const now = Math.floor(Date.now() / 1000);
    const claims = b64({ htm: 'POST', htu: url, iat: now, jti: 'jti-12345678', ath: accessTokenHash(token) });
    const e = { jkt: key.jkt, accessToken: token, method: 'POST', path: '/events/e1/holds', nowSeconds: now };
    for (const header of [
      { typ: 'dpop+jwt', alg: 'none', jwk: key.jwk },
      { typ: 'dpop+jwt', alg: 'HS256', jwk: key.jwk },
      { typ: 'dpop+jwt', alg: 'ES256', jwk: { ...key.jwk, d: 'secret' } },
      { typ: 'JWT', alg: 'ES256', jwk: key.jwk },
    ])
      expect(checkDpopProof(`${b64(header)}.${claims}.c2ln`, e)).toEqual({ ok: false, reason: 'dpop_malformed' });
    // Well formed, the bound key named, but the signature is not that key's.
    const forged = `${b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: key.jwk })}.${claims}.${Buffer.alloc(64).toString('base64url')}`;
    expect(checkDpopProof(forged, e)).toEqual({ ok: false, reason: 'dpop_signature' });
  });

  it('the router memory refuses a jti seen within its TTL, forgets it after, and stays bounded', () => {
    const recent = new RecentProofs(2);
    expect(recent.firstUse('a', 100)).toBe(true);
    expect(recent.firstUse('a', 101)).toBe(false);
    expect(recent.firstUse('a', 100 + DPOP_JTI_TTL_SECONDS)).toBe(true);
    recent.firstUse('b', 200);
    recent.firstUse('c', 200); // pushes out the oldest, 'a'
    expect(recent.firstUse('a', 201)).toBe(true);
  });
});
