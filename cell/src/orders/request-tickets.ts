import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { appendEvent, type Causation } from '../outbox/append';
import type { LockedOrder } from './orders';

/**
 * A paid order asks the ticket issuer for its tickets: one per seat of its confirmed hold, and one per
 * general-admission place (the issuer numbers those). Asking again is harmless: ticket ids derive from the order.
 */
export async function requestTickets(tx: Tx, cause: Causation, order: Pick<LockedOrder, 'id' | 'event_id'>) {
  const seats = await tx.execute<{ seat_id: string }>(sql`
    SELECT hs.seat_id FROM holds h JOIN hold_seats hs ON hs.hold_id = h.id
     WHERE h.order_id = ${order.id} AND h.status = 'confirmed' AND hs.released_at IS NULL ORDER BY hs.seat_id`);
  await appendEvent(tx, cause, 'TicketIssueRequested', order.id, {
    orderId: order.id,
    eventId: order.event_id,
    seatIds: seats.rows.map((r) => r.seat_id),
  });
}

/** Whether every ticket an issuing reported is in the ledger (a writer failed over asynchronously can lose them). */
export async function ticketsRecorded(tx: Tx, orderId: string, ticketIds: string[]): Promise<boolean> {
  const found = await tx.execute<{ n: number }>(
    sql`SELECT count(*)::int AS n FROM tickets WHERE order_id = ${orderId} AND id = ANY(${sql.param(ticketIds)}::text[])`,
  );
  return found.rows[0]?.n === ticketIds.length;
}
