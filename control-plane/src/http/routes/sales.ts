import { createRoute, z } from '@hono/zod-openapi';
import { BUCKETS } from '@onsale/reporting';
import { getSalesBySection, getSalesSummary, getSalesTimeline, getSettlementCsv } from '../../reporting/sales';
import { asPromoter } from '../auth';
import type { App } from '../env';
import { errorResponses } from '../errors';
import { EventIdParam } from '../schemas';

const Funnel = z.object({
  queued: z.number().int(),
  admitted: z.number().int(),
  held: z.number().int(),
  paid: z.number().int(),
  ticketed: z.number().int(),
});
const Counts = {
  holds: z.number().int(),
  paidOrders: z.number().int(),
  seatsSold: z.number().int(),
  gross: z.number().int().describe('minor units'),
  refunded: z.number().int().describe('minor units'),
  declines: z.number().int(),
  expiries: z.number().int(),
};
const Summary = z.object({ eventId: z.string().uuid(), ...Counts, net: z.number().int(), funnel: Funnel });
const Timeline = z.object({
  eventId: z.string().uuid(),
  bucket: z.enum(Object.keys(BUCKETS) as [keyof typeof BUCKETS]),
  points: z.array(z.object({ at: z.string(), ...Counts })),
});
const Sections = z.object({
  eventId: z.string().uuid(),
  sections: z.array(
    z.object({
      section: z.string(),
      tier: z.string(),
      capacity: z.number().int(),
      sold: z.number().int(),
      held: z.number().int(),
      remaining: z.number().int(),
    }),
  ),
});
const TimelineQuery = z
  .object({
    bucket: z.enum(Object.keys(BUCKETS) as [keyof typeof BUCKETS]).default('1m'),
    from: z.string().datetime({ offset: true }).optional(),
    to: z.string().datetime({ offset: true }).optional(),
  })
  .strict();

const common = {
  tags: ['sales'],
  security: [{ bearer: [] }],
  method: 'get' as const,
};
const errors = errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found');

const summary = createRoute({
  ...common,
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/summary',
  summary: 'Totals and the funnel (queued → admitted → held → paid → ticketed) from the reporting projections',
  request: { params: EventIdParam },
  responses: { 200: { description: 'Sales so far', content: { 'application/json': { schema: Summary } } }, ...errors },
});
const timeline = createRoute({
  ...common,
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/timeline',
  summary: 'Sales per time bucket (1m, 5m, 15m, 1h, 1d), optionally between from and to',
  request: { params: EventIdParam, query: TimelineQuery },
  responses: { 200: { description: 'Buckets', content: { 'application/json': { schema: Timeline } } }, ...errors },
});
const sections = createRoute({
  ...common,
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/sections',
  summary: 'Sold, held and remaining seats per section and price tier',
  request: { params: EventIdParam },
  responses: { 200: { description: 'Per section', content: { 'application/json': { schema: Sections } } }, ...errors },
});
const settlement = createRoute({
  ...common,
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/settlement.csv',
  summary: 'Settlement export: one line per paid order (gross, refunded, net, seats) and a total line',
  request: { params: EventIdParam },
  responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: z.string() } } }, ...errors },
});

export function registerSales(app: App) {
  app.openapi(summary, async (c) => {
    const out = await getSalesSummary({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId: c.req.valid('param').eventId,
    });
    return c.json(out, 200);
  });
  app.openapi(timeline, async (c) => {
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
  app.openapi(sections, async (c) => {
    const out = await getSalesBySection({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId: c.req.valid('param').eventId,
    });
    return c.json(out, 200);
  });
  app.openapi(settlement, async (c) => {
    const eventId = c.req.valid('param').eventId;
    const csv = await getSettlementCsv({ ctx: c.get('services'), actor: c.get('actor'), eventId });
    return c.body(csv, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="settlement-${eventId}.csv"`,
    });
  });
}
