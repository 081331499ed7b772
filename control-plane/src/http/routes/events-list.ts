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
  summary: "The tenant's events, newest first, a page at a time",
  description:
    'A page holds `limit` events (100 unless asked, at most 500); `nextAfter`, when not null, is the `after` that ' +
    'asks for the next page.',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    query: z.object({
      after: z.string().uuid().optional(),
      limit: z.coerce.number().int().min(1).max(500).default(100),
    }),
  },
  responses: {
    200: {
      description: 'Events',
      content: {
        'application/json': {
          schema: z.object({ events: z.array(EventSchema), nextAfter: z.string().uuid().nullable() }),
        },
      },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden'),
  },
});

export function registerListEvents(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    const page = await listEvents({ ctx: c.get('services'), actor, page: c.req.valid('query') });
    return c.json({ events: page.events.map(toEventDto), nextAfter: page.nextAfter }, 200);
  });
}
