import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from 'jose';
import { ADMISSION_ALG, ADMISSION_AUDIENCE, ADMISSION_ISSUER, AdmissionClaims } from './admission';

/**
 * Identity tokens (buyers, promoters, operators) come from another party's clock: the algorithms
 * accepted and the skew allowed, the same in every service. Admission tokens are the platform's
 * own and short-lived: no skew is added to them.
 */
export const IDENTITY_ALGORITHMS = ['RS256', 'EdDSA', 'ES256'];
export const CLOCK_TOLERANCE_SECONDS = 30;

/**
 * What a token check can say. `keys_unavailable` is no verdict on the token: the keys could not
 * be fetched, so the caller answers 503 and the buyer retries, rather than refusing a good token.
 */
export type TokenVerdict<T> = { ok: true; claims: T } | { ok: false; reason: 'invalid' | 'keys_unavailable' };

/** A JWKS fetched and cached the same way by every service: a key dropped from it stops working after `cacheMs`. */
export const remoteKeys = (url: string, cacheMs: number): JWTVerifyGetKey =>
  createRemoteJWKSet(new URL(url), { cacheMaxAge: cacheMs, cooldownDuration: Math.min(30_000, cacheMs) });

/**
 * A specific JOSE error is a verdict on the token. A fetch failure, a JWKS time-out, an unusable JWKS or a non-200
 * from the key endpoint (jose's generic error) says nothing about the token.
 */
function keysProblem(err: unknown): boolean {
  if (!(err instanceof errors.JOSEError)) return true;
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC';
}

/** Verifies a JWT against `keys` and parses its claims; a claim that does not parse makes the token invalid. */
export async function verifyToken<T>(
  token: string,
  keys: JWTVerifyGetKey,
  options: { issuer: string; audience: string; algorithms: string[]; clockTolerance?: number },
  parse: (payload: JWTPayload) => T | undefined,
): Promise<TokenVerdict<T>> {
  try {
    const { payload } = await jwtVerify(token, keys, options);
    const claims = parse(payload);
    return claims === undefined ? { ok: false, reason: 'invalid' } : { ok: true, claims };
  } catch (err) {
    return { ok: false, reason: keysProblem(err) ? 'keys_unavailable' : 'invalid' };
  }
}

/**
 * The one admission-token check, used by the router (signature, audience, issuer, expiry, shape)
 * and by the cell, which then also checks the buyer, the event, its own id and revocations.
 */
export function createAdmissionVerifier(jwksUrl: string, cacheMs: number) {
  const keys = remoteKeys(jwksUrl, cacheMs);
  return (token: string) =>
    verifyToken(
      token,
      keys,
      { issuer: ADMISSION_ISSUER, audience: ADMISSION_AUDIENCE, algorithms: [ADMISSION_ALG] },
      (payload) => AdmissionClaims.safeParse(payload).data,
    );
}
export type VerifyAdmission = ReturnType<typeof createAdmissionVerifier>;
