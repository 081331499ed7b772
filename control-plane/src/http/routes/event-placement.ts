import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { placeEvent } from '../../events/events';
import { assertRole } from '../../lib/actors';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam, EventSchema, toEventDto } from '../schemas';

const route = createRoute({
  method: 'put',
  path: '/events/{eventId}/placement',
  tags: ['events'],
  summary: 'Pin the event to a purchase cell (manager or owner), until the onsale starts',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    params: EventIdParam,
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ cellId: z.string().min(1) }).openapi('Placement') } },
    },
  },
  responses: {
    200: { description: 'Placed', content: { 'application/json': { schema: EventSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict'),
  },
});

export function registerEventPlacement(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    assertRole(actor, 'manager');
    const ev = await placeEvent({
      ctx: c.get('services'),
      tenantId: actor.tenantId,
      eventId: c.req.valid('param').eventId,
      input: c.req.valid('json'),
    });
    return c.json(toEventDto(ev), 200);
  });
}
