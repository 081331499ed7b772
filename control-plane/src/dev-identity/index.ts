import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, importJWK, type JWK, SignJWT } from 'jose';

export type DevAlg = 'RS256' | 'EdDSA';

export interface DevIdentityOptions {
  alg?: DevAlg;
  issuer?: string;
  audience?: string;
  ttlSeconds?: number;
  /** A private JWK with its kid (and alg, which wins over `alg`): the same key at every start. */
  signingKey?: string;
}

export const DEV_ISSUER = 'onsale:dev-identity';
export const DEV_AUDIENCE = 'onsale:platform';

/**
 * The local platform's identity issuer (development and tests only): one key pair per instance,
 * a JWKS, and minting of buyer, promoter and operator tokens. Production points the control
 * plane at a real identity provider (IDENTITY_JWKS_URL, IDENTITY_ISSUER, IDENTITY_AUDIENCE).
 */
export async function createDevIdentity(opts: DevIdentityOptions = {}) {
  const { alg, kid, publicKey, privateKey } = await devKeyPair(opts);
  const issuer = opts.issuer ?? DEV_ISSUER;
  const audience = opts.audience ?? DEV_AUDIENCE;
  const publicJwk: JWK = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };

  async function mint(
    claims: Record<string, unknown> & { sub: string },
    o: { ttlSeconds?: number; nowSeconds?: number } = {},
  ) {
    const now = o.nowSeconds ?? Math.floor(Date.now() / 1000);
    const { sub, ...rest } = claims;
    return new SignJWT(rest)
      .setProtectedHeader({ alg, kid, typ: 'JWT' })
      .setSubject(sub)
      .setIssuer(issuer)
      .setAudience(audience)
      .setIssuedAt(now)
      .setExpirationTime(now + (o.ttlSeconds ?? opts.ttlSeconds ?? 3600))
      .setJti(randomUUID())
      .sign(privateKey);
  }

  return {
    alg,
    issuer,
    audience,
    jwks: () => ({ keys: [publicJwk] }),
    mint,
    buyer: (sub: string) => mint({ sub }),
    promoter: (p: { sub: string; tenantId: string; role: 'owner' | 'manager' | 'viewer' }) => mint(p),
    operator: (sub: string) => mint({ sub, role: 'operator' }),
  };
}
export type DevIdentity = Awaited<ReturnType<typeof createDevIdentity>>;

/** The kept key when given one, else a new pair: RS256 unless asked otherwise, what managed providers sign with. */
async function devKeyPair(opts: DevIdentityOptions) {
  if (opts.signingKey) {
    const { kid, alg, ...jwk } = JSON.parse(opts.signingKey) as JWK & { kid: string; alg: DevAlg };
    // The public half is the private JWK without its private members.
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...publicJwk } = jwk;
    return { alg, kid, privateKey: await importJWK(jwk, alg), publicKey: await importJWK(publicJwk, alg) };
  }
  const alg = opts.alg ?? 'RS256';
  const { publicKey, privateKey } = await generateKeyPair(
    alg,
    alg === 'EdDSA' ? { crv: 'Ed25519' } : { modulusLength: 2048 },
  );
  return { alg, kid: `dev_${randomUUID().slice(0, 8)}`, privateKey, publicKey };
}
