import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { getEvent } from '../../events/events';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, EventSchema, toEventDto } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}',
  tags: ['events'],
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: { params: EventIdParam },
  responses: {
    200: { description: 'The event', content: { 'application/json': { schema: EventSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found'),
  },
});

export function registerGetEvent(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const ev = await getEvent({ ctx: c.get('services'), actor, eventId: c.req.valid('param').eventId });
    return c.json(toEventDto(ev), 200);
  });
}
