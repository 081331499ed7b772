import { createRoute } from '@hono/zod-openapi';
import { joinQueue } from '../../waiting-room/join';
import { enforceRateLimits } from '../../waiting-room/rate-limit';
import { buyer } from '../auth';
import { clientIp } from '../client-ip';
import type { App } from '../env';
import { errorResponses } from '../errors';
import { EventIdParam, QueueStatusSchema } from '../schemas';

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/queue',
  tags: ['waiting room'],
  summary: 'Join the waiting room (idempotent per buyer: a refresh or a second device keeps the place)',
  security: [{ bearer: [] }],
  request: { params: EventIdParam },
  responses: {
    200: { description: 'Your place', content: { 'application/json': { schema: QueueStatusSchema } } },
    ...errorResponses('unauthenticated', 'not_found', 'conflict', 'rate_limited'),
  },
});

export function registerJoinQueue(app: App) {
  app.openapi(route, async (c) => {
    const ctx = c.get('services');
    await enforceRateLimits(ctx, { ip: clientIp(c) });
    const actor = await buyer(c);
    await enforceRateLimits(ctx, { buyer: actor.sub });
    c.header('cache-control', 'no-store');
    return c.json(await joinQueue({ ctx, actor, eventId: c.req.valid('param').eventId }), 200);
  });
}
