import type { Config } from '../config';
import type { Services } from '../context';
import { type RoomKeys, roomKeys } from './keys';
import { releaseKeys } from './scripts';

/**
 * A waiting room spread over K Redis shards (WAITING_ROOM_SHARDS), so one huge event is not bounded by one Redis
 * primary. Each shard is a complete room's set of keys under its own hash tag ({event:k}), holding the buyers whose
 * id hashes to it: a join or a poll is one call to one shard, as in a room of one shard (K = 1, the keys and the
 * scripts of before). The room's settings are written to every shard; its R and carried budget live on shard 0.
 *
 * The global order is the single-shard room's: by queue score, then by buyer id (as a sorted set orders ties).
 * Early arrivals' scores are their shuffle keys, the same whichever shard holds them, so the merged order is exactly
 * the single-shard one. Later arrivals' scores are their arrival millisecond (since the room opened) and their number
 * within it on their shard (JOIN, 'ms'): FIFO across shards, except that two buyers who joined on different shards
 * within the same millisecond of the API processes' clocks (plus the skew between those clocks) may be ordered
 * either way. Each shard keeps its own queue in that order; the release step (releaseShards) merges the shards'
 * heads and takes each shard's share of the merged first R.
 */
export const shardCount = (ctx: ShardScope): number => ctx.config.WAITING_ROOM_SHARDS;

/** What finding a room's keys takes: the key prefix and the shard count (the API, the workers and the evacuation's mover). */
export type ShardScope = Pick<Services, 'prefix'> & { config: Pick<Config, 'WAITING_ROOM_SHARDS'> };

/** FNV-1a (32 bits) of the buyer id, mod K: a buyer's shard, stable across processes and deploys. */
export function shardOf(buyer: string, shards: number): number {
  if (shards === 1) return 0;
  let h = 0x811c9dc5;
  for (let i = 0; i < buyer.length; i++) {
    h ^= buyer.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % shards;
}

/** The keys of the shard that holds this buyer's place. */
export function buyerRoomKeys(ctx: ShardScope, eventId: string, buyer: string): RoomKeys {
  const k = shardCount(ctx);
  return k === 1 ? roomKeys(ctx.prefix, eventId) : roomKeys(ctx.prefix, eventId, shardOf(buyer, k));
}

/** Every shard's keys, shard 0 first (the one that keeps R). */
export function allShardKeys(ctx: ShardScope, eventId: string): RoomKeys[] {
  const k = shardCount(ctx);
  return k === 1
    ? [roomKeys(ctx.prefix, eventId)]
    : Array.from({ length: k }, (_, i) => roomKeys(ctx.prefix, eventId, i));
}

/** JOIN's numbering of post-opening arrivals: a counter on one shard, the arrival millisecond across several. */
export const arrivalOrder = (ctx: ShardScope) => (shardCount(ctx) === 1 ? '' : 'ms');

/**
 * The global people ahead of a buyer who has `rank` ahead on their own shard. Buyers spread over K shards by a hash,
 * so of N people ahead a shard holds about N/K: K × rank estimates N with a standard deviation of √(N(K−1)), and the
 * sharded room answers within 4 of them (waiting-room-shards.test.ts). Exact with one shard. Never rises while the
 * buyer waits, as their rank never does.
 */
export const estimatedAhead = (rank: number, shards: number) => rank * shards;

export interface ShardedRelease {
  outcome: 'ok' | 'not_releasing' | 'sold_out' | 'paused';
  /** In the global order. */
  released: string[];
  skipped: number;
  activeShoppers: number;
}

/**
 * One release step across the shards: exactly the budget R allows, in the global order. Shard 0's BUDGET takes the
 * step's n atomically (so two workers stepping at once share R, never exceed it); the step reads the first n of each
 * shard's queue, merges them, and asks each shard for its share of the merged first n, none above the last score
 * taken. A shard's silent waiters are skipped as they come up (they do not count), and the step merges again for
 * what is still due; what no queue had is given back to the budget. Every take is a removal from a queue inside a
 * script, so no buyer is taken twice and the step never passes over one: exactly once. A crash between BUDGET and
 * the takes loses that step's budget (fewer admitted for one step, never more).
 */
export async function releaseShards(
  ctx: Services,
  eventId: string,
  opts: { maxBatch: number; nowMs: number },
): Promise<ShardedRelease> {
  const shards = allShardKeys(ctx, eventId);
  const now = opts.nowMs;
  const active = (await Promise.all(shards.map((k) => ctx.redis.wrActive(k.admitted, now)))).reduce(
    (a, b) => a + Number(b),
    0,
  );
  const [outcome, n] = await ctx.redis.wrBudget(shards[0]!.meta, now, active, opts.maxBatch);
  if (outcome !== 'ok')
    return { outcome: outcome as ShardedRelease['outcome'], released: [], skipped: 0, activeShoppers: active };
  const scoreOf = new Map<string, number>();
  const released: string[] = [];
  let skipped = 0;
  let due = Number(n);
  while (due > 0) {
    const heads = await Promise.all(shards.map((k) => ctx.redis.zrange(k.queue, 0, due - 1, 'WITHSCORES')));
    const merged: { shard: number; member: string; score: number }[] = [];
    heads.forEach((h, shard) => {
      for (let i = 0; i < h.length; i += 2) merged.push({ shard, member: h[i]!, score: Number(h[i + 1]) });
    });
    merged.sort((a, b) => a.score - b.score || Buffer.compare(Buffer.from(a.member), Buffer.from(b.member)));
    const taken = merged.slice(0, due);
    if (taken.length === 0) break;
    const share = shards.map(() => 0);
    for (const t of taken) {
      share[t.shard]!++;
      scoreOf.set(t.member, t.score);
    }
    const top = String(taken[taken.length - 1]!.score);
    const answers = await Promise.all(
      shards.map((k, i) =>
        share[i]
          ? ctx.redis.wrShardRelease(
              ...releaseKeys(k),
              now,
              ctx.config.WAITING_ROOM_ABANDON_SECONDS * 1000,
              ctx.config.ADMISSION_CLAIM_WINDOW_SECONDS * 1000,
              share[i]!,
              share[i]! + 5000,
              top,
            )
          : null,
      ),
    );
    let moved = 0;
    for (const a of answers) {
      if (!a) continue;
      const [s, , ...members] = a;
      skipped += Number(s);
      released.push(...members);
      moved += Number(s) + members.length;
      due -= members.length;
    }
    // Nothing taken: another worker's step took these heads first; what is still due goes back to the budget.
    if (moved === 0) break;
  }
  if (due > 0) await ctx.redis.wrRefund(shards[0]!.meta, due);
  released.sort((a, b) => scoreOf.get(a)! - scoreOf.get(b)! || Buffer.compare(Buffer.from(a), Buffer.from(b)));
  return { outcome: 'ok', released, skipped, activeShoppers: active + released.length };
}
