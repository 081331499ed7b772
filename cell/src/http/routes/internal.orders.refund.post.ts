import { createRoute } from '@hono/zod-openapi';
import { RefundOrderAnswer, RefundOrderRequest } from '@onsale/contracts';
import { refundPaidOrder } from '../../holds/return-seats';
import type { CellApp } from '../app';
import { internalAuth, limitBody } from '../middleware';
import { errors, internalSecurity, OrderParams } from './schemas';

export const refundOrderRoute = createRoute({
  method: 'post',
  path: '/internal/events/{eventId}/orders/{orderId}/refund',
  summary:
    'Cancel a paid order for the promoter: refund it, void its tickets; its seats return to sale once refunded (idempotent)',
  security: internalSecurity,
  middleware: [limitBody(4 * 1024), internalAuth] as const,
  request: {
    params: OrderParams,
    body: { required: true, content: { 'application/json': { schema: RefundOrderRequest } } },
  },
  responses: {
    200: {
      description: 'The order is refunding (or already was)',
      content: { 'application/json': { schema: RefundOrderAnswer } },
    },
    400: errors[400],
    401: errors[401],
    404: errors[404],
    409: errors[409],
  },
});

export function registerRefundOrder(app: CellApp) {
  app.openapi(refundOrderRoute, async (c) => {
    const { eventId, orderId } = c.req.valid('param');
    const result = await refundPaidOrder(c.get('services').ctx, {
      eventId,
      orderId,
      reason: c.req.valid('json').reason,
      correlationId: c.get('correlationId'),
    });
    return c.json(result, 200);
  });
}
