import { CLOCK_TOLERANCE_SECONDS, DomainError, IDENTITY_ALGORITHMS } from '@onsale/contracts';
import { type JWTVerifyGetKey, jwtVerify } from 'jose';
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
}

export function createIdentityVerifier(o: {
  jwks: JWTVerifyGetKey;
  issuer: string;
  audience: string;
  clock: Clock;
}): IdentityVerifier {
  return {
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, o.jwks, {
          issuer: o.issuer,
          audience: o.audience,
          algorithms: IDENTITY_ALGORITHMS,
          currentDate: o.clock.now(),
          clockTolerance: CLOCK_TOLERANCE_SECONDS,
        });
        const parsed = Claims.safeParse(payload);
        if (!parsed.success) throw new Error('claims');
        return parsed.data;
      } catch {
        throw new DomainError('unauthenticated', 'invalid or expired identity token');
      }
    },
  };
}
