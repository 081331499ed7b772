import {
  CLOCK_TOLERANCE_SECONDS,
  DomainError,
  IDENTITY_ALGORITHMS,
  IdentityClaims,
  VerifiedTokens,
  verifyToken,
} from '@onsale/contracts';
import type { JWTVerifyGetKey } from 'jose';
import type { Clock } from '../lib/clock';

export type Principal = IdentityClaims;

export interface IdentityVerifier {
  verify(token: string): Promise<Principal>;
  /** Whether `token` was verified and is still remembered: its verify() is then a lookup, not a signature check. */
  isKnown(token: string): boolean;
}

export function createIdentityVerifier(o: {
  jwks: JWTVerifyGetKey;
  issuer: string;
  audience: string;
  clock: Clock;
}): IdentityVerifier {
  // A buyer polls the waiting room every few seconds with the same token: checked once, then looked up
  // for a minute at most (well inside the identity JWKS's 10-minute cache).
  const verified = new VerifiedTokens<Principal>({ maxAgeMs: 60_000 });
  return {
    isKnown: (token) => verified.get(token, o.clock.now().getTime()) !== undefined,
    async verify(token) {
      const verdict = await verifyToken(
        token,
        o.jwks,
        {
          issuer: o.issuer,
          audience: o.audience,
          algorithms: IDENTITY_ALGORITHMS,
          currentDate: o.clock.now(),
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        },
        (payload) => IdentityClaims.safeParse(payload).data,
        verified,
      );
      if (verdict.ok) return verdict.claims;
      // The provider's keys out of reach say nothing of the token: a 401 would send good buyers to sign in again.
      if (verdict.reason === 'keys_unavailable')
        throw new DomainError('identity_unavailable', 'identity checks are unavailable; retry shortly');
      throw new DomainError('unauthenticated', 'invalid or expired identity token');
    },
  };
}
