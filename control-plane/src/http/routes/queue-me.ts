import { createRoute } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { queueStatus } from '../../waiting-room/status';
import { asQueuedBuyer, bearerSecurity, QUEUED_BUYER_REFUSALS } from '../auth';
import type { App } from '../env';
import { EventIdParam, QueueStatusSchema } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/queue/me',
  tags: ['waiting room'],
  summary: 'Your position, people ahead, estimated wait; once released, the admission token (in the body, never a URL)',
  description:
    'Not a pure read: the first call after your release claims your turn and mints your admission token ' +
    '(a turn not claimed within the claim window goes to the next buyer). Later calls return the same token ' +
    'until it expires, so a refresh or a retry is safe.',
  security: bearerSecurity,
  middleware: [asQueuedBuyer] as const,
  request: { params: EventIdParam },
  responses: {
    200: {
      description: 'Your place or your admission',
      content: { 'application/json': { schema: QueueStatusSchema } },
    },
    ...errorResponses(
      'validation_failed',
      ...QUEUED_BUYER_REFUSALS,
      'not_found',
      'waiting_room_unavailable',
      'signing_key_unavailable',
    ),
  },
});

export function registerQueueMe(app: App) {
  app.openapi(route, async (c) => {
    const actor = c.get('actor');
    c.header('cache-control', 'no-store');
    return c.json(
      await queueStatus({
        ctx: c.get('services'),
        actor,
        eventId: c.req.valid('param').eventId,
        charges: c.get('charges'),
      }),
      200,
    );
  });
}
