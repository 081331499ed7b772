import { KeyObject, sign as sign_ } from 'node:crypto';
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyJwt } from '../src/jwt';

const ISSUER = 'https://idp.test';
const AUDIENCE = 'onsale:buyer';
const ALGORITHMS = ['RS256', 'EdDSA', 'ES256'];
const TOLERANCE = 30;
const options = { issuer: ISSUER, audience: AUDIENCE, algorithms: ALGORITHMS, clockTolerance: TOLERANCE };

type Signer = { alg: string; kid: string; privateKey: CryptoKey; jwk: JWK };
const signers: Record<string, Signer> = {};
let keys: ReturnType<typeof createLocalJWKSet>;
const now = () => Math.floor(Date.now() / 1000);

async function signer(alg: string, kid: string, opts?: Parameters<typeof generateKeyPair>[1]): Promise<Signer> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true, ...opts });
  return { alg, kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg } };
}

function sign(s: Signer, claims: Record<string, unknown>, header: Record<string, unknown> = {}) {
  return new SignJWT(claims).setProtectedHeader({ alg: s.alg, kid: s.kid, ...header }).sign(s.privateKey);
}

const good = (extra: Record<string, unknown> = {}) => ({
  sub: 'buyer-1',
  iss: ISSUER,
  aud: AUDIENCE,
  iat: now(),
  exp: now() + 600,
  ...extra,
});
/** Signs any header as given, for headers jose's signer refuses to produce. */
function signRaw(s: Signer, header: Record<string, unknown>, claims: Record<string, unknown>) {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${sign_(null, Buffer.from(input), KeyObject.from(s.privateKey)).toString('base64url')}`;
}
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

beforeAll(async () => {
  signers.ed = await signer('EdDSA', 'ed-1', { crv: 'Ed25519' });
  signers.rs = await signer('RS256', 'rs-1');
  signers.es = await signer('ES256', 'es-1');
  // Same kids, other key material: forgeries the JWKS cannot tell apart by kid.
  signers.edForged = await signer('EdDSA', 'ed-1', { crv: 'Ed25519' });
  signers.rsForged = await signer('RS256', 'rs-1');
  keys = createLocalJWKSet({ keys: [signers.ed!.jwk, signers.rs!.jwk, signers.es!.jwk] });
});

async function verdicts(token: string) {
  const ours = await verifyJwt(token, keys, options).then(
    (payload) => ({ ok: true as const, payload }),
    (err: Error) => ({ ok: false as const, error: err.constructor.name }),
  );
  const jose = await jwtVerify(token, keys, options).then(
    ({ payload }) => ({ ok: true as const, payload }),
    (err: Error) => ({ ok: false as const, error: err.constructor.name }),
  );
  return { ours, jose };
}

describe('verifyJwt checks a token as jose does, on the calling thread', () => {
  it('accepts well-signed tokens of every accepted alg and returns their claims', async () => {
    for (const s of [signers.ed!, signers.rs!, signers.es!]) {
      const claims = good({ jti: `${s.alg}-jti` });
      const { ours, jose } = await verdicts(await sign(s, claims));
      expect(ours).toEqual({ ok: true, payload: claims });
      expect(jose).toEqual(ours);
    }
  });

  it('refuses what jose refuses, token by token', async () => {
    const ed = signers.ed!;
    const valid = await sign(ed, good());
    const [h, p, s] = valid.split('.') as [string, string, string];
    const flipped = Buffer.from(s, 'base64url');
    flipped[0]! ^= 1;
    const cases: Record<string, string> = {
      'payload swapped under the old signature': `${h}.${b64(good({ sub: 'buyer-2' }))}.${s}`,
      'signature flipped': `${h}.${p}.${flipped.toString('base64url')}`,
      'signed by another key with the same kid (EdDSA)': await sign(signers.edForged!, good()),
      'signed by another key with the same kid (RS256)': await sign(signers.rsForged!, good()),
      'alg none, no signature': `${b64({ alg: 'none', kid: 'ed-1' })}.${p}.`,
      'alg none with the old signature': `${b64({ alg: 'none', kid: 'ed-1' })}.${p}.${s}`,
      'HS256 keyed with the public JWK (alg confusion)': await new SignJWT(good())
        .setProtectedHeader({ alg: 'HS256', kid: 'ed-1' })
        .sign(Buffer.from(JSON.stringify(ed.jwk))),
      'EdDSA header naming the RSA key': await sign({ ...ed, kid: 'rs-1' }, good()),
      'expired beyond the tolerance': await sign(ed, good({ exp: now() - TOLERANCE - 5 })),
      'not yet valid beyond the tolerance': await sign(ed, good({ nbf: now() + TOLERANCE + 60 })),
      'another issuer': await sign(ed, good({ iss: 'https://evil.test' })),
      'another audience': await sign(ed, good({ aud: 'onsale:operator' })),
      'no audience': await sign(ed, good({ aud: undefined })),
      'no issuer': await sign(ed, good({ iss: undefined })),
      'exp as a string': await sign(ed, good({ exp: String(now() + 600) })),
      'iat as a string': await sign(ed, good({ iat: 'yesterday' })),
      'a crit header': signRaw(ed, { alg: 'EdDSA', kid: 'ed-1', crit: ['exp'], exp: 1 }, good()),
      'b64 false': signRaw(ed, { alg: 'EdDSA', kid: 'ed-1', crit: ['b64'], b64: false }, good()),
      'four segments': `${valid}.${s}`,
      'padding in a segment': `${h}.${p}=.${s}`,
      'a header that is not JSON': `${b64('not json')}.${p}.${s}`,
      'a claims set that is an array': `${h}.${b64([good()])}.${s}`,
      empty: '',
    };
    for (const [name, token] of Object.entries(cases)) {
      const { ours, jose } = await verdicts(token);
      expect({ name, ok: ours.ok }).toEqual({ name, ok: false });
      expect({ name, ok: jose.ok }).toEqual({ name, ok: false });
    }
  });

  it('accepts what jose accepts at the edges of the clock and the audience', async () => {
    const ed = signers.ed!;
    const cases = {
      'expired inside the tolerance': good({ exp: now() - TOLERANCE + 5 }),
      'nbf inside the tolerance': good({ nbf: now() + TOLERANCE - 5 }),
      'audience among several': good({ aud: ['other', AUDIENCE] }),
      'no exp': good({ exp: undefined }),
    };
    for (const [name, claims] of Object.entries(cases)) {
      const { ours, jose } = await verdicts(await sign(ed, claims));
      expect({ name, ok: ours.ok }).toEqual({ name, ok: true });
      expect({ name, ok: jose.ok }).toEqual({ name, ok: true });
    }
  });

  it('judges the clock by currentDate when one is given', async () => {
    const token = await sign(signers.ed!, good({ exp: now() + 60 }));
    const later = new Date(Date.now() + (60 + TOLERANCE + 5) * 1000);
    await expect(verifyJwt(token, keys, { ...options, currentDate: later })).rejects.toThrow(/exp/);
    await expect(verifyJwt(token, keys, options)).resolves.toMatchObject({ sub: 'buyer-1' });
  });

  it('refuses an alg the caller did not list, even with a valid signature', async () => {
    const token = await sign(signers.rs!, good());
    await expect(verifyJwt(token, keys, { ...options, algorithms: ['EdDSA'] })).rejects.toThrow(/not allowed/);
  });
});
