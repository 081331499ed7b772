import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { getSeatMap } from '../../events/seat-map';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const SeatMap = z
  .object({
    eventId: z.string(),
    seatCount: z.number().int(),
    seatMapVersion: z.number().int(),
    tiers: z.array(z.object({ code: z.string(), name: z.string(), price: z.number().int(), currency: z.string() })),
    sections: z.array(z.object({ section: z.string(), tier: z.string(), seats: z.number().int() })),
    seats: z.array(
      z.object({ id: z.string(), label: z.string(), section: z.string(), row: z.string(), tier: z.string() }),
    ),
    nextAfter: z.string().nullable().optional(),
  })
  .openapi('SeatMap');

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/seat-map',
  tags: ['events'],
  summary: 'Tiers, per-section counts and a page of seats (ordered by label)',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    params: EventIdParam,
    query: z.object({ after: z.string().optional(), limit: z.coerce.number().int().min(1).max(5000).default(1000) }),
  },
  responses: {
    200: { description: 'Seat map', content: { 'application/json': { schema: SeatMap } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

export function registerGetSeatMap(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const q = c.req.valid('query');
    const r = await getSeatMap({
      ctx: c.get('services'),
      actor,
      eventId: c.req.valid('param').eventId,
      page: { after: q.after, limit: q.limit },
    });
    return c.json(r, 200);
  });
}
