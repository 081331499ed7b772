import { createRoute, z } from '@hono/zod-openapi';
import { releaseHold } from '../../holds/release-hold';
import type { CellApp } from '../app';
import { buyerAuth } from '../middleware';
import { buyerSecurity, errors, OrderParams } from './schemas';

export const releaseHoldRoute = createRoute({
  method: 'delete',
  path: '/events/{eventId}/orders/{orderId}/hold',
  summary: 'Give the held seats back (idempotent)',
  security: buyerSecurity,
  middleware: [buyerAuth] as const,
  request: { params: OrderParams },
  responses: {
    200: {
      description: 'Released, or already ended',
      content: { 'application/json': { schema: z.object({ orderId: z.string(), status: z.string() }) } },
    },
    400: errors[400],
    401: errors[401],
    404: errors[404],
    409: errors[409],
    503: errors[503],
  },
});

export function registerReleaseHold(app: CellApp) {
  app.openapi(releaseHoldRoute, async (c) => {
    const { eventId, orderId } = c.req.valid('param');
    const { status } = await releaseHold(c.get('services').ctx, {
      eventId,
      orderId,
      userId: c.get('userId'),
      correlationId: c.get('correlationId'),
    });
    return c.json({ orderId, status }, 200);
  });
}
