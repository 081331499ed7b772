import {
  CLOCK_TOLERANCE_SECONDS,
  DomainError,
  IDENTITY_ALGORITHMS,
  VerifiedTokens,
  verifyJwt,
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
      const now = o.clock.now();
      const hit = verified.get(token, now.getTime());
      if (hit) return hit;
      try {
        const payload = await verifyJwt(token, o.jwks, {
          issuer: o.issuer,
          audience: o.audience,
          algorithms: IDENTITY_ALGORITHMS,
          currentDate: now,
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        });
        const parsed = Claims.safeParse(payload);
        if (!parsed.success) throw new Error('claims');
        verified.set(token, parsed.data, payload.exp, now.getTime());
        return parsed.data;
      } catch {
        throw new DomainError('unauthenticated', 'invalid or expired identity token');
      }
    },
  };
}
