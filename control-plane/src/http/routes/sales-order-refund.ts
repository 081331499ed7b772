import { createRoute, z } from '@hono/zod-openapi';
import { errorResponses, RefundOrderAnswer, RefundOrderRequest } from '@onsale/contracts';
import { refundOrder } from '../../onsale/refund-order';
import { asPromoter, bearerSecurity } from '../auth';
import type { App } from '../env';
import { EventIdParam } from '../schemas';

const Params = EventIdParam.extend({
  orderId: z
    .string()
    .uuid()
    .openapi({ param: { name: 'orderId', in: 'path' }, example: '5d0c2a9e-2f1b-4c55-8f7e-6a1b2c3d4e5f' }),
});

const route = createRoute({
  method: 'post',
  path: '/events/{eventId}/sales/orders/{orderId}/refund',
  tags: ['sales'],
  summary: 'Refund one paid order (manager or owner): its tickets are voided, its seats return to sale once refunded',
  description:
    "Idempotent: a repeat answers the order's state (refunding, refunded) and refunds nothing twice. " +
    'An order with no captured payment to refund is a 409 conflict naming its status.',
  security: bearerSecurity,
  middleware: [asPromoter] as const,
  request: {
    params: Params,
    body: { required: true, content: { 'application/json': { schema: RefundOrderRequest } } },
  },
  responses: {
    200: {
      description: 'The order is refunding (or already was)',
      content: { 'application/json': { schema: RefundOrderAnswer } },
    },
    ...errorResponses('validation_failed', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'cell_unavailable'),
  },
});

export function registerRefundOrder(app: App) {
  app.openapi(route, async (c) => {
    const { eventId, orderId } = c.req.valid('param');
    const answer = await refundOrder({
      ctx: c.get('services'),
      actor: c.get('actor'),
      eventId,
      orderId,
      reason: c.req.valid('json').reason,
    });
    return c.json(answer, 200);
  });
}
