import { DomainError, metrics, revocationKeys } from '@onsale/contracts';
import type { Services } from '../context';
import { revocations } from '../db/schema';

export interface RevokeInput {
  jti?: string;
  /** Revoke every admission of this buyer issued up to now. */
  sub?: string;
  /** For a jti: the token's expiry (unix seconds) if known; otherwise the longest token life is assumed. */
  exp?: number;
  reason: string;
}

/**
 * Revokes an admission token (by jti) or a buyer's admissions (by sub). The cells refuse it as soon
 * as they read the Redis key; the key lives as long as the token(s) it covers could. The value is
 * the revocation time (unix seconds): tokens of a revoked buyer issued after it are not covered.
 */
export async function revokeAdmission({ ctx, input, actor }: { ctx: Services; input: RevokeInput; actor: string }) {
  if (!input.jti === !input.sub) throw new DomainError('validation_failed', 'give exactly one of jti or sub');
  const now = ctx.clock.now();
  const nowS = Math.floor(now.getTime() / 1000);
  const maxTtl = ctx.config.ADMISSION_TOKEN_TTL_SECONDS;
  const remaining = input.jti && input.exp ? Math.max(1, input.exp - nowS) : maxTtl;
  const key = input.jti ? revocationKeys.jti(input.jti) : revocationKeys.buyer(input.sub as string);
  // The database row is the audit; the Redis key is the enforcement (cells read it).
  const [row] = await ctx.db
    .insert(revocations)
    .values({
      jti: input.jti ?? null,
      subject: input.sub ?? null,
      reason: input.reason,
      revokedBy: actor,
      createdAt: now,
      expiresAt: new Date(now.getTime() + remaining * 1000),
    })
    .returning();
  await ctx.redis.set(key, String(nowS), 'EX', remaining);
  metrics.admissionTokens.inc({ outcome: 'revoked' });
  ctx.log.info('admission revoked', { jti: input.jti, sub: input.sub, ttlSeconds: remaining, actor });
  return { id: row?.id as string, key, ttlSeconds: remaining, expiresAt: row?.expiresAt.toISOString() as string };
}

/** Is this admission revoked (by jti, or by buyer at or after its issue time)? */
export async function isRevoked(ctx: Services, jti: string, sub: string, iat: number): Promise<boolean> {
  const [byJti, bySub] = await ctx.redis.mget(revocationKeys.jti(jti), revocationKeys.buyer(sub));
  if (byJti) return true;
  return bySub != null && Number(bySub) >= iat;
}
