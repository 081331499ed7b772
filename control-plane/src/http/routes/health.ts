import { createRoute, z } from '@hono/zod-openapi';
import { METRICS_CONTENT_TYPE, metrics } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import { releasingSetKey } from '../../waiting-room/keys';
import { allShardKeys } from '../../waiting-room/shards';
import type { App } from '../env';

const route = createRoute({
  method: 'get',
  path: '/healthz',
  tags: ['ops'],
  responses: {
    200: {
      description: 'Database and Redis answer',
      content: { 'application/json': { schema: z.object({ ok: z.boolean() }) } },
    },
    503: {
      description: 'A dependency is down',
      content: { 'application/json': { schema: z.object({ ok: z.boolean(), failed: z.array(z.string()) }) } },
    },
  },
});

export function registerHealth(app: App) {
  app.openapi(route, async (c) => {
    const s = c.get('services');
    const checks = await Promise.allSettled([s.db.execute(sql`select 1`), s.redis.ping()]);
    const failed = ['postgres', 'redis'].filter((_, i) => checks[i]?.status === 'rejected');
    if (failed.length) {
      c.header('retry-after', '5');
      return c.json({ ok: false, failed }, 503);
    }
    return c.json({ ok: true }, 200);
  });
}

/** Prometheus' scrape: this process's counters, and the depth of every queue that is releasing. */
export function registerMetrics(app: App) {
  app.get('/metrics', async (c) => {
    const ctx = c.get('services');
    const releasing = await ctx.redis.smembers(releasingSetKey(ctx.prefix)).catch(() => [] as string[]);
    await Promise.all(
      releasing.map(async (event) => {
        const depths = await Promise.all(allShardKeys(ctx, event).map((k) => ctx.redis.zcard(k.queue).catch(() => 0)));
        metrics.queueDepth.set(
          { event },
          depths.reduce((a, b) => a + b, 0),
        );
      }),
    );
    return c.body(await metrics.render(), 200, { 'content-type': METRICS_CONTENT_TYPE });
  });
}
