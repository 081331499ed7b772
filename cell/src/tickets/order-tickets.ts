import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { DomainError } from '../errors';
import { loadOrderTickets } from './documents';
import { qrSvg } from './qr';
import type { TicketStore } from './store';

/** The order, if it is this buyer's; anyone else gets the same 404 as for an order that does not exist. */
async function ownOrder(ctx: CellContext, eventId: string, orderId: string, userId: string) {
  const found = await ctx.db.execute<{ status: string; user_id: string }>(
    sql`SELECT status, user_id FROM orders WHERE id = ${orderId} AND event_id = ${eventId}`,
  );
  const order = found.rows[0];
  if (!order || order.user_id !== userId) throw new DomainError('not_found', 'order not found');
  return order;
}

const voidedError = (orderId: string, ticketIds: string[], status: string) =>
  new DomainError('ticket_voided', 'these tickets were voided and admit nobody', {
    orderId,
    ticketIds,
    orderStatus: status,
  });

/** The order's PDF as the ticket worker stored it: 404 until issued and stored, 410 once voided. */
export async function orderTicketsPdf(
  ctx: CellContext,
  store: TicketStore,
  q: { eventId: string; orderId: string; userId: string },
): Promise<Uint8Array> {
  const order = await ownOrder(ctx, q.eventId, q.orderId, q.userId);
  const tickets = await loadOrderTickets(ctx.db, q.orderId);
  if (!tickets)
    throw new DomainError('tickets_not_issued', 'this order has no tickets yet', {
      orderId: q.orderId,
      orderStatus: order.status,
    });
  if (tickets.voided.length) throw voidedError(q.orderId, tickets.voided, order.status);
  const pdf = await store.get(store.keys.orderPdf(q.eventId, q.orderId));
  if (!pdf)
    throw new DomainError('tickets_not_issued', 'the tickets are issued; their PDF is being prepared', {
      orderId: q.orderId,
      orderStatus: order.status,
      pdf: 'pending',
    });
  return pdf;
}

/** One ticket's QR code (its signed token), rendered as SVG on request: it is a pure function of the token. */
export async function ticketQrSvg(
  ctx: CellContext,
  q: { eventId: string; orderId: string; ticketId: string; userId: string },
): Promise<string> {
  const order = await ownOrder(ctx, q.eventId, q.orderId, q.userId);
  const found = await ctx.db.execute<{ token: string; voided_at: Date | null }>(
    sql`SELECT token, voided_at FROM tickets WHERE id = ${q.ticketId} AND order_id = ${q.orderId}`,
  );
  const ticket = found.rows[0];
  if (!ticket) {
    const any = await ctx.db.execute(sql`SELECT 1 FROM tickets WHERE order_id = ${q.orderId} LIMIT 1`);
    if (!any.rows.length)
      throw new DomainError('tickets_not_issued', 'this order has no tickets yet', {
        orderId: q.orderId,
        orderStatus: order.status,
      });
    throw new DomainError('not_found', 'no such ticket in this order', { ticketId: q.ticketId });
  }
  if (ticket.voided_at) throw voidedError(q.orderId, [q.ticketId], order.status);
  return qrSvg(ticket.token);
}

/** The event's signed void list as the ticket worker last published it (a JWT: scanners verify it). */
export async function eventVoidList(store: TicketStore, eventId: string): Promise<string> {
  const list = await store.get(store.keys.voidList(eventId));
  if (!list)
    throw new DomainError('not_found', 'no void list is published for this event: no tickets issued yet', { eventId });
  return new TextDecoder().decode(list);
}
