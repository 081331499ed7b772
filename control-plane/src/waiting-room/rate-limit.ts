import { DomainError } from '@onsale/contracts';
import type { Services } from '../context';
import { rateBucketKey } from './keys';

/** Token buckets in Redis (one Lua call each): per client IP and per buyer. 429 with Retry-After. */
export async function enforceRateLimits(ctx: Services, who: { ip?: string; buyer?: string }) {
  const now = ctx.clock.now().getTime();
  const c = ctx.config;
  const checks: Promise<[number, number]>[] = [];
  if (who.ip)
    checks.push(
      ctx.redis.wrBucket(
        rateBucketKey(ctx.prefix, 'ip', who.ip),
        c.RATE_LIMIT_IP_PER_SECOND,
        c.RATE_LIMIT_IP_BURST,
        now,
      ),
    );
  if (who.buyer) {
    checks.push(
      ctx.redis.wrBucket(
        rateBucketKey(ctx.prefix, 'buyer', who.buyer),
        c.RATE_LIMIT_BUYER_PER_SECOND,
        c.RATE_LIMIT_BUYER_BURST,
        now,
      ),
    );
  }
  const results = await Promise.all(checks);
  const refused = results.filter(([allowed]) => allowed === 0);
  if (refused.length) {
    const retryMs = Math.max(...refused.map(([, ms]) => ms));
    const retryAfter = Math.max(1, Math.ceil(retryMs / 1000));
    throw new DomainError(
      'rate_limited',
      'too many requests; slow down',
      { retryAfterSeconds: retryAfter },
      retryAfter,
    );
  }
}
