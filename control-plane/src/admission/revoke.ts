import { DomainError, metrics, revocationKeys } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Services } from '../context';
import { revocations } from '../db/schema';

export interface RevokeInput {
  jti?: string;
  /** Revoke every admission of this buyer issued up to now. */
  sub?: string;
  /** For a jti: the token's expiry (unix seconds) if known; otherwise the longest token life is assumed. */
  exp?: number;
  reason: string;
  /** The onsale the revocation is made for, if the operator says: the onsale's bot report counts it. */
  eventId?: string;
}

/**
 * Revokes an admission token (by jti) or a buyer's admissions (by sub). The value is the revocation time (unix
 * seconds): tokens of a revoked buyer issued after it are not covered.
 *
 * Each cell checks revocations in its own Redis, so the revocation is delivered to every registered cell: one
 * delivery row per cell, committed with the audit row, sent by the worker to the cell's internal API and retried
 * with backoff until the cell has it (./deliver.ts). Chosen over a topic the cells consume (which would make every
 * cell a client of the control plane's Kafka cluster, a cross-boundary dependency the stacks do not have) and over
 * the cell asking the control plane on each hold (which puts the control plane on the hot path of a hold). The
 * price: a cell that cannot be reached keeps accepting the token until it can (its admitted buyers keep buying,
 * the same as before the revocation), and a cell whose Redis loses its data forgets the revocations already
 * delivered. The control plane's own Redis key answers the buyer's queue status. Measured on the development
 * machine: the README of the control plane gives the time from revoke to refusal.
 */
export async function revokeAdmission({ ctx, input, actor }: { ctx: Services; input: RevokeInput; actor: string }) {
  if (!input.jti === !input.sub) throw new DomainError('validation_failed', 'give exactly one of jti or sub');
  const now = ctx.clock.now();
  const nowS = Math.floor(now.getTime() / 1000);
  const maxTtl = ctx.config.ADMISSION_TOKEN_TTL_SECONDS;
  const remaining = input.jti && input.exp ? Math.max(1, input.exp - nowS) : maxTtl;
  const key = input.jti ? revocationKeys.jti(input.jti) : revocationKeys.buyer(input.sub as string);
  // The database row is the audit; the cells' Redis keys, delivered from the rows beside it, are the enforcement.
  const row = await ctx.db.transaction(async (tx) => {
    const [inserted] = await tx
      .insert(revocations)
      .values({
        jti: input.jti ?? null,
        subject: input.sub ?? null,
        reason: input.reason,
        revokedBy: actor,
        eventId: input.eventId ?? null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + remaining * 1000),
      })
      .returning();
    if (!inserted) throw new Error('revocation insert returned no row');
    // Every cell, whatever its status: a draining or down cell may still (or again) accept the token.
    await tx.execute(sql`
      INSERT INTO revocation_deliveries (revocation_id, cell_id) SELECT ${inserted.id}::uuid, id FROM cells`);
    return inserted;
  });
  await ctx.redis.set(key, String(nowS), 'EX', remaining);
  metrics.admissionTokens.inc({ outcome: 'revoked' });
  ctx.log.info('admission revoked', { jti: input.jti, sub: input.sub, ttlSeconds: remaining, actor });
  return { id: row.id, key, ttlSeconds: remaining, expiresAt: row.expiresAt.toISOString() };
}

/** Is this admission revoked (by jti, or by buyer at or after its issue time)? */
export async function isRevoked(ctx: Services, jti: string, sub: string, iat: number): Promise<boolean> {
  // Two GETs (pipelined), not an MGET: on a Redis Cluster the two keys live in different slots.
  const [byJti, bySub] = await Promise.all([
    ctx.redis.get(revocationKeys.jti(jti)),
    ctx.redis.get(revocationKeys.buyer(sub)),
  ]);
  if (byJti) return true;
  return bySub != null && Number(bySub) >= iat;
}
