import { DomainError } from '@onsale/contracts';
import type { Services } from '../context';
import { rateBucketKey } from './keys';
import { shardCount } from './shards';

/** Whom a request is charged to: the client IP's bucket, then the buyer's. */
export interface RateCharges {
  ip?: string;
  buyer?: string;
}

/**
 * A room script's arguments, charged to `who`: the number of keys, the script's own keys, the buckets' keys,
 * the script's own arguments, then each bucket's rate and burst (scripts.ts, BUCKETS).
 */
export function charged(
  ctx: Services,
  who: RateCharges | undefined,
  keys: string[],
  args: (string | number)[],
): (string | number)[] {
  const c = ctx.config;
  // A sharded room's keys carry their shard's hash tag; its buckets take the same (keys.ts, rateBucketKey).
  const tag = shardCount(ctx) > 1 && keys[0] ? (/\{[^}]*\}/.exec(keys[0])?.[0] ?? '') : '';
  const buckets: string[] = [];
  const limits: number[] = [];
  if (who?.ip) {
    buckets.push(rateBucketKey(ctx.prefix, 'ip', who.ip, tag));
    limits.push(c.RATE_LIMIT_IP_PER_SECOND, c.RATE_LIMIT_IP_BURST);
  }
  if (who?.buyer) {
    buckets.push(rateBucketKey(ctx.prefix, 'buyer', who.buyer, tag));
    limits.push(c.RATE_LIMIT_BUYER_PER_SECOND, c.RATE_LIMIT_BUYER_BURST);
  }
  return [keys.length + buckets.length, ...keys, ...buckets, ...args, ...limits];
}

/** 429 with Retry-After, once a bucket said how long until it has a token. */
export function rateLimited(waitMs: number): DomainError {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return new DomainError('rate_limited', 'too many requests; slow down', { retryAfterSeconds: retryAfter }, retryAfter);
}

/**
 * Charges the buckets of `who` in a Redis call of their own. The room's scripts charge them in the call that
 * joins or polls; this is for a charge that must come first (the IP's, before an unknown token is checked).
 */
export async function enforceRateLimits(ctx: Services, who: RateCharges): Promise<void> {
  const [allowed, waitMs] = await ctx.redis.wrLimits(...charged(ctx, who, [], [ctx.clock.now().getTime()]));
  if (allowed === 0) throw rateLimited(waitMs);
}
