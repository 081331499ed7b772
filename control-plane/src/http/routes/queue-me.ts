import { createRoute } from '@hono/zod-openapi';
import { enforceRateLimits } from '../../waiting-room/rate-limit';
import { queueStatus } from '../../waiting-room/status';
import { buyer } from '../auth';
import { clientIp } from '../client-ip';
import type { App } from '../env';
import { errorResponses } from '../errors';
import { EventIdParam, QueueStatusSchema } from '../schemas';

const route = createRoute({
  method: 'get',
  path: '/events/{eventId}/queue/me',
  tags: ['waiting room'],
  summary: 'Your position, people ahead, estimated wait; once released, the admission token (in the body, never a URL)',
  security: [{ bearer: [] }],
  request: { params: EventIdParam },
  responses: {
    200: {
      description: 'Your place or your admission',
      content: { 'application/json': { schema: QueueStatusSchema } },
    },
    ...errorResponses('unauthenticated', 'not_found', 'rate_limited'),
  },
});

export function registerQueueMe(app: App) {
  app.openapi(route, async (c) => {
    const ctx = c.get('services');
    await enforceRateLimits(ctx, { ip: clientIp(c) });
    const actor = await buyer(c);
    await enforceRateLimits(ctx, { buyer: actor.sub });
    c.header('cache-control', 'no-store');
    return c.json(await queueStatus({ ctx, actor, eventId: c.req.valid('param').eventId }), 200);
  });
}
