import {
  CLOCK_TOLERANCE_SECONDS,
  DomainError,
  IDENTITY_ALGORITHMS,
  VerifiedTokens,
  verifyToken,
} from '@onsale/contracts';
import type { JWTVerifyGetKey } from 'jose';
import { z } from 'zod';
import type { Clock } from '../lib/clock';

export const PROMOTER_ROLES = ['viewer', 'manager', 'owner'] as const;
export type PromoterRole = (typeof PROMOTER_ROLES)[number];

/** Custom claims the identity provider puts in tokens: promoters carry tenantId + role; operators role=operator. */
const Claims = z.object({
  sub: z.string().min(1),
  tenantId: z.string().uuid().optional(),
  role: z.enum(['viewer', 'manager', 'owner', 'operator']).optional(),
});
export type Principal = z.infer<typeof Claims>;

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
        (payload) => Claims.safeParse(payload).data,
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
