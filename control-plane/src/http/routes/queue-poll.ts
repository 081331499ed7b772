import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses } from '@onsale/contracts';
import { pollWithTicket } from '../../waiting-room/poll';
import type { App } from '../env';
import { EventIdParam, TicketPollSchema } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/queue/poll',
  tags: ['waiting room'],
  summary: 'Your place, from your queue ticket: the poll to repeat while you wait (no token, no Redis)',
  description:
    'Send the `ticket` that POST queue or GET queue/me gave you as the `x-queue-ticket` header. Any API process ' +
    'answers from the ticket and the room state it refreshes every WAITING_ROOM_MARK_INTERVAL_MS (250 ms), so ' +
    'your turn may be announced up to that much late, never early. When `status` is `your_turn`, call GET queue/me ' +
    '(with your identity token) to collect the admission; when `refreshTicket` is true, call it once for a new ticket. ' +
    'These polls also keep your place (the room skips waiters who stopped polling).',
  request: {
    params: EventIdParam,
    headers: z.object({
      'x-queue-ticket': z.string().min(1).openapi({ description: 'The queue ticket (QueueStatus.ticket)' }),
    }),
  },
  responses: {
    200: { description: 'Your place, or your turn', content: { 'application/json': { schema: TicketPollSchema } } },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'waiting_room_unavailable'),
  },
});

export function registerQueuePoll(app: App) {
  app.openapi(route, async (c) => {
    c.header('cache-control', 'no-store');
    const { eventId } = c.req.valid('param');
    return c.json(
      await pollWithTicket({ ctx: c.get('services'), eventId, ticket: c.req.valid('header')['x-queue-ticket'] }),
      200,
    );
  });
}
