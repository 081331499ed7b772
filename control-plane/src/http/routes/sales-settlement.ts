import { createRoute, z } from '@hono/zod-openapi';
import { getSettlementCsv } from '../../reporting/sales';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { salesErrors } from '../sales-schemas';
import { EventIdParam } from '../schemas';

const route = createRoute({
  tags: ['sales'],
  security: bearerSecurity,
  method: 'get',
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/settlement.csv',
  summary: 'Settlement export: one line per paid order (gross, refunded, net, seats) and a total line',
  request: { params: EventIdParam },
  responses: { 200: { description: 'CSV', content: { 'text/csv': { schema: z.string() } } }, ...salesErrors },
});

export function registerSalesSettlement(app: App) {
  app.openapi(route, async (c) => {
    const eventId = c.req.valid('param').eventId;
    const csv = await getSettlementCsv({ ctx: c.get('services'), actor: c.get('actor'), eventId });
    return c.body(csv, 200, {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="settlement-${eventId}.csv"`,
    });
  });
}
