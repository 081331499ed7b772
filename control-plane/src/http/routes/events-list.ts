import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { listEvents } from '../../events/events';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventSchema, toEventDto } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events',
  tags: ['events'],
  summary: "The tenant's events",
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  responses: {
    200: {
      description: 'Events',
      content: { 'application/json': { schema: z.object({ events: z.array(EventSchema) }) } },
    },
    ...errorResponses('unauthenticated', 'forbidden'),
  },
});

export function registerListEvents(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const rows = await listEvents({ ctx: c.get('services'), actor });
    return c.json({ events: rows.map(toEventDto) }, 200);
  });
}
