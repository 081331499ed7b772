import { createRoute } from '@hono/zod-openapi';
import { OrderView } from '@onsale/contracts';
import { getOrder } from '../../orders/get-order';
import type { CellApp } from '../app';
import { buyerAuth } from '../middleware';
import { buyerSecurity, errors, OrderParams } from './schemas';

export const getOrderRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/orders/{orderId}',
  summary: "The buyer's order: status, seats, amount, hold expiry, tickets",
  security: buyerSecurity,
  middleware: [buyerAuth] as const,
  request: { params: OrderParams },
  responses: {
    200: { description: 'The order', content: { 'application/json': { schema: OrderView } } },
    400: errors[400],
    401: errors[401],
    404: errors[404],
  },
});

export function registerGetOrder(app: CellApp) {
  app.openapi(getOrderRoute, async (c) => {
    const { eventId, orderId } = c.req.valid('param');
    c.header('Cache-Control', 'no-store');
    return c.json(await getOrder(c.get('services').ctx, eventId, orderId, c.get('userId')), 200);
  });
}
