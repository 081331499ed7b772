import { createRoute, z } from '@hono/zod-openapi';
import { getSalesSummary } from '../../reporting/sales';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { SalesCounts, salesErrors } from '../sales-schemas';
import { EventIdParam } from '../schemas';

const Funnel = z.object({
  queued: z.number().int(),
  admitted: z.number().int(),
  held: z.number().int(),
  paid: z.number().int(),
  ticketed: z.number().int(),
});
const Summary = z.object({ eventId: z.string().uuid(), ...SalesCounts, net: z.number().int(), funnel: Funnel });

const route = createRoute({
  tags: ['sales'],
  security: bearerSecurity,
  method: 'get',
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/summary',
  summary: 'Totals and the funnel (queued → admitted → held → paid → ticketed) from the reporting projections',
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Sales so far', content: { 'application/json': { schema: Summary } } },
    ...salesErrors,
  },
});

export function registerSalesSummary(app: App) {
  app.openapi(route, async (c) => {
    const out = await getSalesSummary({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId: c.req.valid('param').eventId,
    });
    return c.json(out, 200);
  });
}
