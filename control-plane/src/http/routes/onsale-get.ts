import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { getOnsale } from '../../onsale/status';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, OnsaleSchema } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/onsale',
  tags: ['onsale'],
  summary: 'The schedule, readiness in the cell (load status, attempts, last error), R and the waiting room',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Onsale', content: { 'application/json': { schema: OnsaleSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

export function registerGetOnsale(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    return c.json(
      await getOnsale({ ctx: c.get('services'), tenantId: actor.tenantId, eventId: c.req.valid('param').eventId }),
      200,
    );
  });
}
