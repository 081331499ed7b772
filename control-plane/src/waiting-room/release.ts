import { metrics } from '@onsale/contracts';
import type { Services } from '../context';
import { appendFact } from '../outbox/facts';
import { releasingSetKey, roomKeys } from './keys';
import { releaseKeys } from './scripts';
import { releaseShards, shardCount } from './shards';

export interface ReleaseResult {
  eventId: string;
  outcome: 'ok' | 'not_releasing' | 'sold_out' | 'paused';
  released: string[];
  skipped: number;
  activeShoppers: number;
}

/**
 * One release step for one event: admits what R allows since the last step (in queue order),
 * skipping silent waiters. Atomic in Redis, so several workers can run it without exceeding R.
 * Tokens are minted when the buyer collects them (GET queue/me), not here.
 */
export async function releaseStep(
  ctx: Services,
  eventId: string,
  opts: { maxBatch?: number } = {},
): Promise<ReleaseResult> {
  const now = ctx.clock.now().getTime();
  const [outcome, active, skipped, ...released] =
    shardCount(ctx) === 1
      ? await ctx.redis.wrRelease(
          ...releaseKeys(roomKeys(ctx.prefix, eventId)),
          now,
          ctx.config.WAITING_ROOM_ABANDON_SECONDS * 1000,
          ctx.config.ADMISSION_CLAIM_WINDOW_SECONDS * 1000,
          opts.maxBatch ?? 5000,
          (opts.maxBatch ?? 5000) + 5000,
        )
      : await releaseShards(ctx, eventId, { maxBatch: opts.maxBatch ?? 5000, nowMs: now }).then(
          (r) => [r.outcome, r.activeShoppers, r.skipped, ...r.released] as const,
        );
  if (released.length > 0) metrics.admitted.inc({ event: eventId }, released.length);
  if (released.length > 0)
    await appendFact(ctx.db, 'BuyersAdmitted', eventId, { eventId, count: released.length }, new Date(now));
  return {
    eventId,
    outcome: outcome as ReleaseResult['outcome'],
    released,
    skipped: Number(skipped),
    activeShoppers: Number(active),
  };
}

/** Runs a release step for every event that is releasing (every event has its own queue and R). */
export async function releaseAll(ctx: Services): Promise<ReleaseResult[]> {
  const ids = await ctx.redis.smembers(releasingSetKey(ctx.prefix));
  const out = await Promise.all(ids.map((id) => releaseStep(ctx, id)));
  for (const r of out) {
    if (r.released.length || r.skipped)
      ctx.log.debug('released', { eventId: r.eventId, released: r.released.length, skipped: r.skipped });
  }
  return out;
}
