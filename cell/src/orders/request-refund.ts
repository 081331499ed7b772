import { metrics } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { appendEvent, type Causation } from '../outbox/append';
import { type LockedOrder, setOrderStatus } from './orders';

/**
 * A paid order is to be refunded (its event cancelled, or its promoter cancelling it): the order
 * goes to refunding, RefundRequested asks the payment worker for the refund (it refunds under an
 * idempotency key of its own), and the order's tickets stop admitting anyone at once. Returns the
 * number of tickets voided.
 */
export async function requestRefund(tx: Tx, cause: Causation, order: LockedOrder, reason: string): Promise<number> {
  const pay = await tx.execute<{ payment_intent_id: string }>(
    sql`SELECT payment_intent_id FROM payments WHERE order_id = ${order.id}`,
  );
  const paymentIntentId = pay.rows[0]?.payment_intent_id;
  if (!paymentIntentId) throw new Error(`order ${order.id} is ${order.status} without a payment`);
  await setOrderStatus(tx, order, 'refunding', reason);
  metrics.compensations.inc({ kind: 'refund' });
  await appendEvent(tx, cause, 'RefundRequested', order.id, {
    orderId: order.id,
    paymentIntentId,
    amount: order.amount,
    reason,
  });
  return voidTickets(tx, order.id);
}

/** The order's tickets admit nobody from now on (the seat's unique ticket index then lets a new one in). */
export async function voidTickets(tx: Tx, orderId: string): Promise<number> {
  const voided = await tx.execute(
    sql`UPDATE tickets SET voided_at = now() WHERE order_id = ${orderId} AND voided_at IS NULL`,
  );
  return voided.rowCount ?? 0;
}
