import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { requestAuthorizationCancel } from '../orders/cancel-authorization';
import { lockOrder, setOrderStatus } from '../orders/orders';
import { ENDED_UNPAID } from '../orders/state';
import { appendEvent } from '../outbox/append';
import { releaseHoldSeats } from './release-seats';

export interface ReleaseHoldInput {
  eventId: string;
  orderId: string;
  userId: string;
  correlationId: string;
}

/**
 * The buyer gives their seats back before paying. Idempotent: releasing an order that has
 * already ended answers with its state. A confirmed order's seats are no longer the
 * buyer's to drop; that path is a refund, not a release.
 */
export async function releaseHold(ctx: CellContext, input: ReleaseHoldInput): Promise<{ status: string }> {
  const cause = { cellId: ctx.cellId, correlationId: input.correlationId, causationId: null };
  return withWriteTx(ctx, async (tx) => {
    const order = await lockOrder(tx, input.orderId);
    if (!order || order.event_id !== input.eventId || order.user_id !== input.userId) {
      throw new DomainError('not_found', 'order not found');
    }
    if (ENDED_UNPAID.has(order.status)) return { status: order.status };
    const released = order.status === 'pending_payment' ? await releaseHoldSeats(tx, input.orderId, ['active']) : null;
    if (!released) {
      throw new DomainError('order_not_releasable', `an order in status ${order.status} cannot be released`, {
        status: order.status,
      });
    }

    await setOrderStatus(tx, order, 'released', 'released_by_buyer');
    await appendEvent(tx, cause, 'HoldReleased', input.orderId, {
      orderId: input.orderId,
      holdId: released.holdId,
      seatIds: released.seatIds,
      reason: 'released_by_buyer',
    });
    const payment = await tx.execute<{ payment_intent_id: string }>(
      sql`SELECT payment_intent_id FROM payments WHERE order_id = ${input.orderId}`,
    );
    const intent = payment.rows[0]?.payment_intent_id;
    if (intent) await requestAuthorizationCancel(tx, cause, input.orderId, intent, 'released_by_buyer');
    return { status: 'released' };
  });
}
