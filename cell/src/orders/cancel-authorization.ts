import { metrics } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { appendEvent, type Causation } from '../outbox/append';

/**
 * Asks the payment worker to cancel an authorization, once per PaymentIntent: expiry, the
 * buyer's release and a late authorization can all find the same intent, and the second
 * finder sees the request already made. Returns whether this call made it.
 */
export async function requestAuthorizationCancel(
  tx: Tx,
  cause: Causation,
  orderId: string,
  paymentIntentId: string,
  reason: string,
): Promise<boolean> {
  const known = await tx.execute<{ status: string }>(
    sql`SELECT status FROM payments WHERE order_id = ${orderId} AND payment_intent_id = ${paymentIntentId} FOR UPDATE`,
  );
  const status = known.rows[0]?.status;
  if (status === 'cancel_requested' || status === 'canceled') return false;
  if (status !== undefined) {
    await tx.execute(sql`
      UPDATE payments SET status = 'cancel_requested', updated_at = now()
       WHERE order_id = ${orderId} AND payment_intent_id = ${paymentIntentId}`);
  }
  await appendEvent(tx, cause, 'AuthorizationCancelRequested', orderId, { orderId, paymentIntentId, reason });
  metrics.compensations.inc({ kind: 'cancel_authorization' });
  return true;
}
