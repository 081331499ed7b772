import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { salesStatusOf } from '../inventory/sales-status';
import { type LockedOrder, lockOrder } from '../orders/orders';
import { requestRefund, voidTickets } from '../orders/request-refund';
import { appendEvent, type Causation } from '../outbox/append';
import { releaseHoldSeats } from './release-seats';

/**
 * The promoter cancels one paid order (the buyer cannot come, a fraud check): the order goes to
 * refunding, RefundRequested asks the payment worker for the refund, its tickets are voided at
 * once (they no longer admit anyone). The seats return to sale when the refund is done
 * (`returnRefundedSeats`). Asking again answers with the order's state and changes nothing.
 */
export async function refundPaidOrder(
  ctx: CellContext,
  input: { eventId: string; orderId: string; reason: string; correlationId: string },
): Promise<{ orderId: string; status: string }> {
  return withWriteTx(ctx, async (tx) => {
    const order = await lockOrder(tx, input.orderId);
    if (!order || order.event_id !== input.eventId) throw new DomainError('not_found', 'order not found');
    if (order.status === 'refunding' || order.status === 'refunded') return { orderId: order.id, status: order.status };
    if (order.status !== 'paid' && order.status !== 'ticketed')
      throw new DomainError('order_not_releasable', `an order in status ${order.status} has no payment to refund`, {
        status: order.status,
      });
    // The refund continues the order's own saga, caused by this request.
    const cause = { cellId: ctx.cellId, correlationId: order.correlation_id, causationId: input.correlationId };
    await requestRefund(tx, cause, order, input.reason);
    return { orderId: order.id, status: order.status };
  });
}

/**
 * A refunded order's seats and general-admission places go back on sale, once: its confirmed
 * hold is released in this transaction (a redelivered Refunded finds it released and does
 * nothing; the inbox already drops exact duplicates), its tickets are voided so the seat's
 * unique ticket index lets a new buyer's ticket in. A cancelled event sells nothing again.
 */
export async function returnRefundedSeats(tx: Tx, cause: Causation, order: LockedOrder): Promise<boolean> {
  if ((await salesStatusOf(tx, order.event_id)) === 'canceled') return false;
  const released = await releaseHoldSeats(tx, order.id, ['confirmed']);
  if (!released) return false;
  await voidTickets(tx, order.id);
  await appendEvent(tx, cause, 'HoldReleased', order.id, { orderId: order.id, ...released, reason: 'refunded' });
  return true;
}
