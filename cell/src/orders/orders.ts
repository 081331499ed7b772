import { metrics, type OrderStatus } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { assertTransition } from './state';

export type LockedOrder = {
  id: string;
  event_id: string;
  user_id: string;
  status: OrderStatus;
  amount: number;
  currency: string;
  version: number;
  /** The order's saga: events caused from outside it (a promoter's call, a cancel) continue it. */
  correlation_id: string;
};

/** Every saga transition starts here: the order row locked, its state read under the lock. */
export async function lockOrder(tx: Tx, orderId: string): Promise<LockedOrder | undefined> {
  const rows = await tx.execute<LockedOrder>(sql`
    SELECT id, event_id, user_id, status, amount, trim(currency) AS currency, version, correlation_id
      FROM orders WHERE id = ${orderId} FOR UPDATE`);
  return rows.rows[0];
}

/** Moves a locked order to its next status; a move the order's life does not allow is refused. */
export async function setOrderStatus(
  tx: Tx,
  order: LockedOrder,
  status: OrderStatus,
  failureReason?: string,
): Promise<void> {
  assertTransition(order.id, order.status, status);
  metrics.orderTransitions.inc({ from: order.status, to: status });
  await tx.execute(sql`
    UPDATE orders SET status = ${status}, version = version + 1, updated_at = now(),
           failure_reason = coalesce(${failureReason ?? null}, failure_reason)
     WHERE id = ${order.id}`);
  order.status = status;
}

export async function setPaymentStatus(tx: Tx, orderId: string, status: string): Promise<void> {
  await tx.execute(sql`UPDATE payments SET status = ${status}, updated_at = now() WHERE order_id = ${orderId}`);
}
