import { createRoute, z } from '@hono/zod-openapi';
import { BUYER_ORDERS_PAGE, BuyerOrderSummary, BuyerOrdersAfter } from '@onsale/contracts';
import { listBuyerOrders } from '../../orders/list-buyer-orders';
import type { CellApp } from '../app';
import { buyerAuth } from '../middleware';
import { buyerSecurity, errors } from './schemas';

export const listMyOrdersRoute = createRoute({
  method: 'get',
  path: '/me/orders',
  summary: `A page of the buyer's orders in this cell, newest first (at most ${BUYER_ORDERS_PAGE}); the router gathers every cell's for "my orders"`,
  security: buyerSecurity,
  middleware: [buyerAuth] as const,
  request: { query: z.object({ after: BuyerOrdersAfter.optional() }) },
  responses: {
    200: {
      description: "The buyer's orders here",
      content: { 'application/json': { schema: z.object({ orders: z.array(BuyerOrderSummary) }) } },
    },
    400: errors[400],
    401: errors[401],
  },
});

export function registerListMyOrders(app: CellApp) {
  app.openapi(listMyOrdersRoute, async (c) => {
    c.header('Cache-Control', 'no-store');
    const { after } = c.req.valid('query');
    return c.json({ orders: await listBuyerOrders(c.get('services').ctx, c.get('userId'), after) }, 200);
  });
}
