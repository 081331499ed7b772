import { createRoute } from '@hono/zod-openapi';
import { errorResponses, RefundOrderAnswer, RefundOrderRequest } from '@onsale/contracts';
import { refundPaidOrder } from '../../holds/return-seats';
import type { CellApp } from '../app';
import { internalAuth, limitBody, validParams } from '../middleware';
import { internalSecurity, OrderParams } from './schemas';

export const refundOrderRoute = createRoute({
  method: 'post',
  path: '/internal/events/{eventId}/orders/{orderId}/refund',
  summary:
    'Cancel a paid order for the promoter: refund it, void its tickets; its seats return to sale once refunded (idempotent)',
  security: internalSecurity,
  // The caller first, then its ids, then the body's size: each refusal names the first thing wrong.
  middleware: [internalAuth, validParams(OrderParams), limitBody(4 * 1024)] as const,
  request: {
    params: OrderParams,
    body: { required: true, content: { 'application/json': { schema: RefundOrderRequest } } },
  },
  responses: {
    200: {
      description: 'The order is refunding (or already was)',
      content: { 'application/json': { schema: RefundOrderAnswer } },
    },
    ...errorResponses(
      'bad_request',
      'validation_failed',
      'unauthenticated',
      'not_found',
      'order_not_releasable',
      'epoch_fenced',
    ),
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
