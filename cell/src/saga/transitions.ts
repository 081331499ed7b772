import { metrics } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type { Tx } from '../db/client';
import { PermanentError } from '../errors';
import { expireOrders } from '../holds/expire';
import { releaseHoldSeats } from '../holds/release-seats';
import { returnRefundedSeats } from '../holds/return-seats';
import { cancelUnpaid, salesStatusOf } from '../inventory/sales-status';
import type { Handlers } from '../messaging/consumer-runner';
import { requestAuthorizationCancel } from '../orders/cancel-authorization';
import { type LockedOrder, lockOrder, setOrderStatus, setPaymentStatus } from '../orders/orders';
import { requestRefund } from '../orders/request-refund';
import { requestTickets, ticketsRecorded } from '../orders/request-tickets';
import { ENDED_UNPAID } from '../orders/state';
import { appendEvent } from '../outbox/append';

async function mustLock(tx: Tx, orderId: string): Promise<LockedOrder> {
  const order = await lockOrder(tx, orderId);
  if (!order) throw new PermanentError(`order ${orderId} does not exist in this cell`);
  return order;
}

/**
 * Ties a payment fact to the order's recorded intent before it moves the order. A writer failover under
 * asynchronous replication loses the ledger's last commits, the payments row among them, while the facts
 * the lost writer had already published (PaymentAuthorized, CaptureRequested…) still reach the promoted
 * one: the order would be confirmed and ticketed with no record of the money. An order with no intent
 * recorded adopts the fact's (the cell's own topic names it for this order; there is one intent per order,
 * created with the order's key); an order whose recorded intent is another one is never moved by it.
 */
async function tieToRecordedIntent(tx: Tx, order: LockedOrder, paymentIntentId: string, amount: number): Promise<void> {
  const adopted = await tx.execute(sql`
    INSERT INTO payments (order_id, payment_intent_id, status, amount, currency)
    VALUES (${order.id}, ${paymentIntentId}, 'requires_capture', ${amount}, ${order.currency})
    ON CONFLICT (order_id) DO NOTHING`);
  if ((adopted.rowCount ?? 0) > 0) {
    // Worth an operator's look: the ledger had lost this payment.
    await tx.execute(sql`
      INSERT INTO incidents (order_id, kind, details)
      VALUES (${order.id}, 'intent_adopted', ${JSON.stringify({ paymentIntentId, status: order.status })})
      ON CONFLICT (order_id, kind) DO NOTHING`);
    return;
  }
  const rows = await tx.execute<{ payment_intent_id: string }>(
    sql`SELECT payment_intent_id FROM payments WHERE order_id = ${order.id}`,
  );
  const recorded = rows.rows[0]!.payment_intent_id;
  if (recorded !== paymentIntentId)
    throw new PermanentError(`intent ${paymentIntentId} is not order ${order.id}'s recorded intent ${recorded}`);
}

/**
 * The purchase saga: every transition locks the order, reads its state under the lock, and
 * either moves it forward with the next command in the outbox or does nothing (a duplicate or
 * a message overtaken by events). Late money is always compensated, never attached.
 */
export const sagaHandlers: Handlers = {
  async HoldCreated(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    if (order.status !== 'pending_payment') return;
    await appendEvent(tx, cause, 'PaymentAuthorizationRequested', order.id, {
      orderId: order.id,
      amount: order.amount,
      currency: order.currency,
      userId: order.user_id,
    });
  },

  async PaymentIntentCreated(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    // The order ended while the intent was being created: nobody will pay for these seats.
    if (ENDED_UNPAID.has(order.status)) {
      await requestAuthorizationCancel(tx, cause, order.id, payload.paymentIntentId, `order_${order.status}`);
    }
  },

  async PaymentAuthorized(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    if (ENDED_UNPAID.has(order.status)) {
      await requestAuthorizationCancel(tx, cause, order.id, payload.paymentIntentId, 'authorized_after_hold_ended');
      return;
    }
    if (order.status !== 'pending_payment') return;
    await tieToRecordedIntent(tx, order, payload.paymentIntentId, payload.amount);
    if ((await salesStatusOf(tx, order.event_id)) === 'canceled') {
      // The event was cancelled while the buyer paid: nothing is confirmed, the money goes back.
      await cancelUnpaid(tx, cause, order, 'event_canceled');
      return;
    }
    if (payload.amount !== order.amount)
      throw new PermanentError(`authorized ${payload.amount}, order is ${order.amount}`);

    const live = await tx.execute(sql`
      UPDATE holds SET status = 'confirmed'
       WHERE order_id = ${order.id} AND status = 'active' AND expires_at > now() RETURNING id`);
    if (live.rowCount === 0) {
      // The hold lapsed before the money came: expire it now and give the money back.
      await expireOrders(tx, { cellId: cause.cellId, causationId: cause.causationId }, [order.id]);
      await requestAuthorizationCancel(tx, cause, order.id, payload.paymentIntentId, 'authorized_after_hold_ended');
      return;
    }
    await setOrderStatus(tx, order, 'confirmed');
    await setPaymentStatus(tx, order.id, 'authorized');
    await appendEvent(tx, cause, 'OrderConfirmed', order.id, {
      orderId: order.id,
      holdId: (live.rows[0] as { id: string }).id,
    });
    await appendEvent(tx, cause, 'CaptureRequested', order.id, {
      orderId: order.id,
      paymentIntentId: payload.paymentIntentId,
      amount: order.amount,
    });
  },

  async PaymentFailed(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    if (order.status !== 'pending_payment') return;
    const released = await releaseHoldSeats(tx, order.id, ['active']);
    await setOrderStatus(tx, order, 'failed', `payment_failed: ${payload.reason}`);
    await setPaymentStatus(tx, order.id, 'failed');
    if (released) {
      await appendEvent(tx, cause, 'HoldReleased', order.id, {
        orderId: order.id,
        ...released,
        reason: 'payment_failed',
      });
    }
  },

  async PaymentCaptured(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    if (order.status === 'confirmed') await tieToRecordedIntent(tx, order, payload.paymentIntentId, payload.amount);
    if (order.status === 'confirmed' && (await salesStatusOf(tx, order.event_id)) === 'canceled') {
      // Captured for an event cancelled meanwhile: refund it, issue nothing.
      await setPaymentStatus(tx, order.id, 'captured');
      await requestRefund(tx, cause, order, 'event_canceled');
      return;
    }
    if (order.status === 'confirmed') {
      await setOrderStatus(tx, order, 'paid');
      await setPaymentStatus(tx, order.id, 'captured');
      await requestTickets(tx, cause, order);
      return;
    }
    if (ENDED_UNPAID.has(order.status)) {
      // Money was taken for seats this order no longer owns: record it and refund, idempotently.
      await tx.execute(sql`
        INSERT INTO incidents (order_id, kind, details)
        VALUES (${order.id}, 'captured_after_release', ${JSON.stringify({ paymentIntentId: payload.paymentIntentId, status: order.status })})
        ON CONFLICT (order_id, kind) DO NOTHING`);
      await setOrderStatus(tx, order, 'refunding', 'captured_after_release');
      await setPaymentStatus(tx, order.id, 'captured');
      metrics.compensations.inc({ kind: 'refund' });
      await appendEvent(tx, cause, 'RefundRequested', order.id, {
        orderId: order.id,
        paymentIntentId: payload.paymentIntentId,
        amount: payload.amount,
        reason: 'captured_after_release',
      });
      return;
    }
    if (order.status === 'pending_payment') {
      // Capture is only ever requested after confirmation; the confirmation must still be on its way.
      throw new Error(`capture seen before confirmation for order ${order.id}`);
    }
  },

  async CaptureFailed(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    if (order.status !== 'confirmed') return;
    const released = await releaseHoldSeats(tx, order.id, ['confirmed']);
    await setOrderStatus(tx, order, 'failed', `capture_failed: ${payload.reason}`);
    if (released) {
      await appendEvent(tx, cause, 'HoldReleased', order.id, {
        orderId: order.id,
        ...released,
        reason: 'capture_failed',
      });
    }
    await requestAuthorizationCancel(tx, cause, order.id, payload.paymentIntentId, 'capture_failed');
  },

  async TicketIssued(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    if (order.status !== 'paid') return;
    if (await ticketsRecorded(tx, order.id, payload.ticketIds)) {
      await setOrderStatus(tx, order, 'ticketed');
      return;
    }
    // The issuing this event reports is not in the ledger: its commit was lost with a writer failed over
    // asynchronously after the relay had published it. The order stays paid and asks for its tickets again.
    await requestTickets(tx, cause, order);
  },

  async AuthorizationCanceled(tx, { payload }) {
    await mustLock(tx, payload.orderId);
    await setPaymentStatus(tx, payload.orderId, 'canceled');
  },

  async Refunded(tx, { payload }, cause) {
    const order = await mustLock(tx, payload.orderId);
    await setPaymentStatus(tx, order.id, 'refunded');
    if (order.status === 'refunding') await setOrderStatus(tx, order, 'refunded');
    // The money is back with the buyer: the seats go back on sale (once; a cancelled event sells nothing).
    if (order.status === 'refunded') await returnRefundedSeats(tx, cause, order);
  },
};
