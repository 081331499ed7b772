import { createRoute, z } from '@hono/zod-openapi';
import { getSalesBySection } from '../../reporting/sales';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { salesErrors } from '../sales-schemas';
import { EventIdParam } from '../schemas';

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

const route = createRoute({
  tags: ['sales'],
  security: bearerSecurity,
  method: 'get',
  middleware: [asPromoter] as const,
  path: '/events/{eventId}/sales/sections',
  summary: 'Sold, held and remaining seats per section and price tier',
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Per section', content: { 'application/json': { schema: Sections } } },
    ...salesErrors,
  },
});

export function registerSalesSections(app: App) {
  app.openapi(route, async (c) => {
    const out = await getSalesBySection({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId: c.req.valid('param').eventId,
    });
    return c.json(out, 200);
  });
}
