import { z } from '@hono/zod-openapi';
import { EventParams, errors, OrderParams } from './schemas';

/** Ticket ids derive from (order, seat or unit): `tkt_` and a hex digest. */
export const TicketParams = OrderParams.extend({
  ticketId: z.string().regex(/^tkt_[0-9a-f]{26}$/, 'a ticket id (tkt_ and 26 hex digits)'),
});
export const ScannerParams = EventParams;

/** The public half of the cell's ticket-signing keys, as gate scanners download them. */
export const TicketKeySet = z
  .object({
    keys: z.array(
      z.object({ kty: z.string(), crv: z.string(), x: z.string(), kid: z.string(), alg: z.string(), use: z.string() }),
    ),
  })
  .openapi('TicketKeySet');

export const ticketErrors = {
  ...errors,
  404: {
    description: "Not the buyer's order, no such ticket, or (code tickets_not_issued) not issued or stored yet",
    content: errors[404].content,
  },
  410: { description: 'Voided (code ticket_voided): admits nobody', content: errors[404].content },
};
