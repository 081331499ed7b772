import { metrics } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { uuids } from '../db/sql';
import { requestAuthorizationCancel } from '../orders/cancel-authorization';
import { appendEvent, type Causation } from '../outbox/append';
import { releaseGaUnits } from './release-ga-units';

export interface ExpiredHold {
  orderId: string;
  holdId: string;
  seatIds: string[];
  gaUnits?: { areaId: string; quantity: number }[];
}

/**
 * Expires the holds of the given orders that are still active and past their expiry:
 * releases their seats and general-admission places, moves unconfirmed orders to `expired`, emits HoldExpired and, where a
 * PaymentIntent exists, AuthorizationCancelRequested. Locks orders before holds (the order
 * every writer of the cell follows), and re-checks every condition under those locks, so a
 * racing confirmation either wins before us or finds the hold gone.
 */
export async function expireOrders(
  tx: Tx,
  cause: Omit<Causation, 'correlationId'>,
  orderIds: string[],
): Promise<ExpiredHold[]> {
  if (orderIds.length === 0) return [];
  const locked = await tx.execute<{ id: string; correlation_id: string }>(
    sql`SELECT id, correlation_id FROM orders WHERE id = ANY(${uuids([...orderIds].sort())}) ORDER BY id FOR UPDATE`,
  );
  // Each order's events carry that order's correlation id: the business timeline stays whole.
  const correlation = new Map(locked.rows.map((r) => [r.id, r.correlation_id]));
  const expired = await tx.execute<{ hold_id: string; order_id: string; seat_ids: string[] }>(sql`
    WITH h AS (
      UPDATE holds SET status = 'expired', ended_at = now()
       WHERE order_id = ANY(${uuids(orderIds)}) AND status = 'active' AND expires_at <= now()
      RETURNING id, order_id
    ), s AS (
      UPDATE hold_seats SET released_at = now()
       WHERE hold_id IN (SELECT id FROM h) AND released_at IS NULL
      RETURNING hold_id, seat_id
    )
    SELECT h.id AS hold_id, h.order_id, coalesce(array_agg(s.seat_id) FILTER (WHERE s.seat_id IS NOT NULL), '{}') AS seat_ids
      FROM h LEFT JOIN s ON s.hold_id = h.id GROUP BY h.id, h.order_id`);
  if (expired.rows.length === 0) return [];
  const gaByHold = await releaseGaUnits(
    tx,
    expired.rows.map((r) => r.hold_id),
  );

  const failed = await tx.execute<{ id: string; payment_intent_id: string | null }>(sql`
    UPDATE orders o SET status = 'expired', version = version + 1, updated_at = now(),
           failure_reason = 'hold_expired'
      FROM (SELECT unnest(${uuids(expired.rows.map((r) => r.order_id))}) AS id) x
      LEFT JOIN payments p ON p.order_id = x.id
     WHERE o.id = x.id AND o.status = 'pending_payment'
    RETURNING o.id, p.payment_intent_id`);
  metrics.orderTransitions.inc({ from: 'pending_payment', to: 'expired' }, failed.rows.length);
  const intentByOrder = new Map(failed.rows.map((r) => [r.id, r.payment_intent_id]));

  const result: ExpiredHold[] = [];
  for (const row of expired.rows) {
    const ga = gaByHold.get(row.hold_id);
    const hold = { orderId: row.order_id, holdId: row.hold_id, seatIds: row.seat_ids, ...(ga ? { gaUnits: ga } : {}) };
    const orderCause = { ...cause, correlationId: correlation.get(hold.orderId) ?? hold.orderId };
    await appendEvent(tx, orderCause, 'HoldExpired', hold.orderId, hold);
    const intent = intentByOrder.get(hold.orderId);
    if (intent) await requestAuthorizationCancel(tx, orderCause, hold.orderId, intent, 'hold_expired');
    result.push(hold);
  }
  return result;
}
