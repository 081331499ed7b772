import { createRoute, z } from '@hono/zod-openapi';
import { ticketQrSvg } from '../../tickets/order-tickets';
import type { CellApp } from '../app';
import { buyerAuth } from '../middleware';
import { buyerSecurity } from './schemas';
import { TicketParams, ticketErrors } from './tickets.schemas';

export const ticketQrRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/orders/{orderId}/tickets/{ticketId}/qr.svg',
  summary: "One ticket's QR code (SVG), carrying its signed token for the door scanner",
  security: buyerSecurity,
  middleware: [buyerAuth] as const,
  request: { params: TicketParams },
  responses: {
    200: { description: 'The QR code', content: { 'image/svg+xml': { schema: z.string() } } },
    400: ticketErrors[400],
    401: ticketErrors[401],
    404: ticketErrors[404],
    410: ticketErrors[410],
  },
});

export function registerTicketQr(app: CellApp) {
  app.openapi(ticketQrRoute, async (c) => {
    const { eventId, orderId, ticketId } = c.req.valid('param');
    const svg = await ticketQrSvg(c.get('services').ctx, { eventId, orderId, ticketId, userId: c.get('userId') });
    return c.body(svg, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'private, no-store' });
  });
}
