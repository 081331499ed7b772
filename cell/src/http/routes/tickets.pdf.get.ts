import { createRoute, z } from '@hono/zod-openapi';
import { orderTicketsPdf } from '../../tickets/order-tickets';
import type { CellApp } from '../app';
import { buyerAuth } from '../middleware';
import { buyerSecurity, OrderParams } from './schemas';
import { ticketErrors } from './tickets.schemas';

export const ticketsPdfRoute = createRoute({
  method: 'get',
  path: '/events/{eventId}/orders/{orderId}/tickets.pdf',
  summary: "The order's tickets as one PDF: a page per ticket with its seat or area and QR code",
  security: buyerSecurity,
  middleware: [buyerAuth] as const,
  request: { params: OrderParams },
  responses: {
    200: {
      description: 'The PDF the ticket worker stored',
      content: { 'application/pdf': { schema: z.string().openapi({ format: 'binary' }) } },
    },
    400: ticketErrors[400],
    401: ticketErrors[401],
    404: ticketErrors[404],
    410: ticketErrors[410],
    503: ticketErrors[503],
  },
});

export function registerTicketsPdf(app: CellApp) {
  app.openapi(ticketsPdfRoute, async (c) => {
    const { eventId, orderId } = c.req.valid('param');
    const pdf = await orderTicketsPdf(c.get('services').ctx, c.get('services').ticketStore, {
      eventId,
      orderId,
      userId: c.get('userId'),
    });
    return c.body(pdf as Uint8Array<ArrayBuffer>, 200, {
      'content-type': 'application/pdf',
      'content-disposition': `attachment; filename="tickets-${orderId}.pdf"`,
      'cache-control': 'private, no-store',
    });
  });
}
