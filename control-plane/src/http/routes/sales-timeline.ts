import { createRoute, z } from '@hono/zod-openapi';
import { getSalesTimeline } from '../../reporting/sales';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { SalesBucket, SalesCounts, salesErrors } from '../sales-schemas';
import { EventIdParam } from '../schemas';

const Timeline = z.object({
  eventId: z.string().uuid(),
  bucket: SalesBucket,
  points: z.array(z.object({ at: z.string(), ...SalesCounts })),
});
const TimelineQuery = z
  .object({
    bucket: SalesBucket.default('1m'),
    from: z.string().datetime({ offset: true }).optional(),
    to: z.string().datetime({ offset: true }).optional(),
  })
  .strict();

const route = createRoute({
  tags: ['sales'],
  security: bearerSecurity,
  method: 'get',
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/timeline',
  summary: 'Sales per time bucket (1m, 5m, 15m, 1h, 1d), optionally between from and to',
  request: { params: EventIdParam, query: TimelineQuery },
  responses: {
    200: { description: 'Buckets', content: { 'application/json': { schema: Timeline } } },
    ...salesErrors,
  },
});

export function registerSalesTimeline(app: App) {
  app.openapi(route, async (c) => {
    const q = c.req.valid('query');
    const out = await getSalesTimeline({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId: c.req.valid('param').eventId,
      bucket: q.bucket,
      from: q.from ? new Date(q.from) : undefined,
      to: q.to ? new Date(q.to) : undefined,
    });
    return c.json(out, 200);
  });
}
