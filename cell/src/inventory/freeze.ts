import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { uuids } from '../db/sql';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';

/**
 * Evacuation's part in a cell: freezing an event's sales (the source refuses new holds while the
 * event moves), the source's ledger view (what is sold or held, what is still in flight), and on
 * the target, seats blocked because the source sold or still holds them.
 *
 * The freeze is the event's one stop switch, `events.sales_status` (on_sale | paused | canceled
 * from the sale's own controls), set to `moving`. The hold transaction reads it under FOR SHARE of
 * the event row and the freeze writes it under the row's update lock, so a hold racing the freeze
 * either commits before the freeze returns or sees it and is refused. Pause and resume from the
 * console leave a moving event alone (sales-status.ts); only the mover lifts the freeze, back to the
 * state the control plane records for the sale.
 */

/** Orders in these states are still moving through the saga (payment, capture, ticketing, refund). */
export const OPEN_ORDER_STATUSES = ['pending_payment', 'confirmed', 'paid', 'refunding'] as const;
/** The status of the placeholder order that keeps a target cell's seats blocked for the source. */
export const BLOCK_ORDER_STATUS = 'evacuation_block';
/** The sales status of an event that is moving between cells: no new holds in this cell. */
export const MOVING = 'moving';

async function salesStatus(tx: Tx, eventId: string): Promise<string> {
  const r = await tx.execute<{ sales_status: string }>(sql`SELECT sales_status FROM events WHERE id = ${eventId}`);
  if (!r.rows[0]) throw new DomainError('not_found', 'event not found in this cell', { eventId });
  return r.rows[0].sales_status;
}

/** Freezes the event's sales in this cell; idempotent. Returns once every racing hold has committed or lost. */
export async function freezeSales(ctx: CellContext, eventId: string) {
  return withWriteTx(ctx, async (tx) => {
    // New holds take share locks beside the ones already held, so under a stream of holds the freeze
    // could wait long: it gives up after a bound (the mover records the error and resume retries, by
    // which time the router has stopped sending new holds for the moving event).
    await tx.execute(sql`SET LOCAL lock_timeout = '5s'`);
    const r = await tx.execute<{ id: string }>(sql`
      UPDATE events SET sales_status = ${MOVING}, sales_status_reason = 'evacuation'
       WHERE id = ${eventId} AND sales_status <> 'canceled' RETURNING id`);
    if (r.rows.length === 0 && (await salesStatus(tx, eventId)) === 'canceled')
      throw new DomainError('event_canceled', 'the event is cancelled; there is nothing to move', { eventId });
    return { eventId, frozen: true };
  });
}

/**
 * Lifts the freeze to the sale's state in the control plane (on_sale or paused). Idempotent: an
 * event no longer moving keeps whatever its sale controls set since.
 */
export async function unfreezeSales(ctx: CellContext, eventId: string, status: 'on_sale' | 'paused') {
  return withWriteTx(ctx, async (tx) => {
    const r = await tx.execute<{ id: string }>(sql`
      UPDATE events SET sales_status = ${status}, sales_status_reason = NULL
       WHERE id = ${eventId} AND sales_status = ${MOVING} RETURNING id`);
    if (r.rows.length === 0) await salesStatus(tx, eventId);
    return { eventId, frozen: false };
  });
}

export interface LedgerView {
  eventId: string;
  frozen: boolean;
  /** Seats not sellable here: an unreleased hold (active or confirmed for an order) or a ticket. Sorted. */
  occupiedSeatIds: string[];
  ticketedSeats: number;
  activeHolds: number;
  openOrders: number;
}

/** What the source knows about the event's seats, for the target's copy and for the drain. */
export async function ledgerView(ctx: CellContext, eventId: string): Promise<LedgerView> {
  const ev = await ctx.db.execute<{ sales_status: string }>(sql`SELECT sales_status FROM events WHERE id = ${eventId}`);
  if (!ev.rows[0]) throw new DomainError('not_found', 'event not found in this cell', { eventId });
  // One snapshot for the three reads.
  return ctx.db.transaction(
    async (tx) => {
      const occupied = await tx.execute<{ seat_id: string }>(sql`
        SELECT hs.seat_id FROM hold_seats hs JOIN holds h ON h.id = hs.hold_id JOIN orders o ON o.id = h.order_id
         WHERE h.event_id = ${eventId} AND hs.released_at IS NULL AND o.status <> ${BLOCK_ORDER_STATUS}
        UNION
        SELECT t.seat_id FROM tickets t JOIN seats s ON s.id = t.seat_id WHERE s.event_id = ${eventId}
        ORDER BY 1`);
      const counts = await tx.execute<{ active_holds: number; open_orders: number; tickets: number }>(sql`
        SELECT
          (SELECT count(*)::int FROM holds h JOIN orders o ON o.id = h.order_id
            WHERE h.event_id = ${eventId} AND h.status = 'active' AND o.status <> ${BLOCK_ORDER_STATUS}) AS active_holds,
          (SELECT count(*)::int FROM orders
            WHERE event_id = ${eventId} AND status IN (${sql.join(
              OPEN_ORDER_STATUSES.map((s) => sql`${s}`),
              sql`, `,
            )})) AS open_orders,
          (SELECT count(*)::int FROM tickets t JOIN seats s ON s.id = t.seat_id WHERE s.event_id = ${eventId}) AS tickets`);
      const c = counts.rows[0]!;
      return {
        eventId,
        frozen: ev.rows[0]!.sales_status === MOVING,
        occupiedSeatIds: occupied.rows.map((r) => r.seat_id),
        ticketedSeats: c.tickets,
        activeHolds: c.active_holds,
        openOrders: c.open_orders,
      };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}

/** A stable uuid per (event, source cell) for the placeholder order and hold. */
function stableUuid(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('|')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

async function ensureBlockHold(tx: Tx, eventId: string, sourceCell: string): Promise<string> {
  const orderId = stableUuid('evacuation-block-order', eventId, sourceCell);
  const holdId = stableUuid('evacuation-block-hold', eventId, sourceCell);
  await tx.execute(sql`
    INSERT INTO orders (id, event_id, user_id, status, amount, currency, correlation_id)
    SELECT ${orderId}, ${eventId}, ${`evacuation:${sourceCell}`}, ${BLOCK_ORDER_STATUS}, 0, s.currency, ${`evacuation:${eventId}`}
      FROM seats s WHERE s.event_id = ${eventId} LIMIT 1
    ON CONFLICT (id) DO NOTHING`);
  await tx.execute(sql`
    INSERT INTO holds (id, order_id, event_id, user_id, status, expires_at)
    VALUES (${holdId}, ${orderId}, ${eventId}, ${`evacuation:${sourceCell}`}, 'active', 'infinity')
    ON CONFLICT (id) DO NOTHING`);
  return holdId;
}

/**
 * On the target: the seats the source sold or still holds are taken by one placeholder hold that
 * never expires (the unique index on unreleased hold seats keeps them off sale here, and the
 * availability map shows them taken). Idempotent; a seat already blocked stays blocked.
 */
export async function blockSeats(ctx: CellContext, eventId: string, sourceCell: string, seatIds: string[]) {
  return withWriteTx(ctx, async (tx) => {
    const found = await tx.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM seats WHERE event_id = ${eventId} AND id = ANY(${uuids(seatIds)})`,
    );
    if (found.rows[0]!.n !== new Set(seatIds).size)
      throw new DomainError('seats_not_found', 'some seats are not in this event', { eventId });
    const holdId = await ensureBlockHold(tx, eventId, sourceCell);
    const ins = await tx.execute(sql`
      INSERT INTO hold_seats (hold_id, seat_id)
      SELECT ${holdId}, unnest(${uuids(seatIds)})
      ON CONFLICT DO NOTHING`);
    const blocked = await tx.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM hold_seats WHERE hold_id = ${holdId} AND released_at IS NULL`,
    );
    return { eventId, inserted: ins.rowCount ?? 0, blocked: blocked.rows[0]!.n };
  });
}

/** On the target: seats the source reports free again become sellable here. Idempotent. */
export async function unblockSeats(ctx: CellContext, eventId: string, sourceCell: string, seatIds: string[]) {
  const holdId = stableUuid('evacuation-block-hold', eventId, sourceCell);
  return withWriteTx(ctx, async (tx) => {
    const r = await tx.execute(sql`
      UPDATE hold_seats SET released_at = now()
       WHERE hold_id = ${holdId} AND seat_id = ANY(${uuids(seatIds)}) AND released_at IS NULL`);
    const left = await tx.execute<{ n: number }>(
      sql`SELECT count(*)::int AS n FROM hold_seats WHERE hold_id = ${holdId} AND released_at IS NULL`,
    );
    return { eventId, released: r.rowCount ?? 0, blocked: left.rows[0]!.n };
  });
}

/** The seats this cell blocks for a source (sorted). */
export async function blockedSeats(ctx: CellContext, eventId: string, sourceCell: string): Promise<string[]> {
  const holdId = stableUuid('evacuation-block-hold', eventId, sourceCell);
  const r = await ctx.db.execute<{ seat_id: string }>(
    sql`SELECT seat_id FROM hold_seats WHERE hold_id = ${holdId} AND released_at IS NULL ORDER BY seat_id`,
  );
  return r.rows.map((x) => x.seat_id);
}
