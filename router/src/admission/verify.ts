import { ADMISSION_ALG, ADMISSION_AUDIENCE, ADMISSION_ISSUER, AdmissionClaims } from '@onsale/contracts';
import { createRemoteJWKSet, errors, jwtVerify } from 'jose';

export type AdmissionResult =
  | { ok: true; claims: AdmissionClaims }
  /** The token is not good: forged, expired, for another audience, malformed. */
  | { ok: false; reason: 'invalid' }
  /** The keys could not be fetched: nobody can tell whether the token is good. */
  | { ok: false; reason: 'keys_unavailable' };

/**
 * Verifies admission tokens locally against the control plane's JWKS, cached, so the control plane is not on the
 * hot path of a hold. Only the signature, audience, issuer, expiry and claim shape are checked here; the cell checks
 * again, with the buyer's identity and revocations (defence in depth).
 */
export function createAdmissionVerifier(jwksUrl: string, cacheMs: number) {
  const keys = createRemoteJWKSet(new URL(jwksUrl), {
    cacheMaxAge: cacheMs,
    cooldownDuration: Math.min(30_000, cacheMs),
  });

  return async function verifyAdmission(token: string): Promise<AdmissionResult> {
    try {
      const { payload } = await jwtVerify(token, keys, {
        issuer: ADMISSION_ISSUER,
        audience: ADMISSION_AUDIENCE,
        algorithms: [ADMISSION_ALG],
      });
      const claims = AdmissionClaims.safeParse(payload);
      return claims.success ? { ok: true, claims: claims.data } : { ok: false, reason: 'invalid' };
    } catch (err) {
      return { ok: false, reason: keysProblem(err) ? 'keys_unavailable' : 'invalid' };
    }
  };
}
/**
 * A specific JOSE error is a verdict on the token. A fetch failure, a JWKS time-out, an unusable JWKS or a non-200
 * from the key endpoint (jose's generic error) says nothing about the token: the buyer should retry, not be refused.
 */
function keysProblem(err: unknown): boolean {
  if (!(err instanceof errors.JOSEError)) return true;
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || err.code === 'ERR_JOSE_GENERIC';
}

export type VerifyAdmission = ReturnType<typeof createAdmissionVerifier>;
