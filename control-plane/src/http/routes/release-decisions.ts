import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { dbOf } from '../../db/tx';
import { eventForTenant } from '../../events/events';
import { listDecisions } from '../../release-controller/override';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { DecisionSchema, EventIdParam } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/release-decisions',
  tags: ['onsale'],
  summary: "The release controller's decisions for the event (newest first)",
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam, query: z.object({ limit: z.coerce.number().int().min(1).max(1000).default(100) }) },
  responses: {
    200: {
      description: 'Decisions',
      content: { 'application/json': { schema: z.object({ decisions: z.array(DecisionSchema) }) } },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

export function registerReleaseDecisions(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const ctx = c.get('services');
    const { eventId } = c.req.valid('param');
    await eventForTenant(dbOf(ctx), actor.tenantId, eventId);
    return c.json({ decisions: await listDecisions({ ctx, eventId, limit: c.req.valid('query').limit }) }, 200);
  });
}
