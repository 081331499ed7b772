import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { appendEvent } from '../outbox/append';

export interface ReleaseHoldInput {
  eventId: string;
  orderId: string;
  userId: string;
  correlationId: string;
}

const ENDED = new Set(['released', 'expired', 'failed', 'canceled']);

/**
 * The buyer gives their seats back before paying. Idempotent: releasing an order that has
 * already ended answers with its state. A confirmed order's seats are no longer the
 * buyer's to drop; that path is a refund, not a release.
 */
export async function releaseHold(ctx: CellContext, input: ReleaseHoldInput): Promise<{ status: string }> {
  const cause = { cellId: ctx.cellId, correlationId: input.correlationId, causationId: null };
  return withWriteTx(ctx, async (tx) => {
    const order = await tx.execute<{ status: string; user_id: string }>(sql`
      SELECT status, user_id FROM orders WHERE id = ${input.orderId} AND event_id = ${input.eventId} FOR UPDATE`);
    const row = order.rows[0];
    if (!row || row.user_id !== input.userId) throw new DomainError('not_found', 'order not found');

    const released = await tx.execute<{ hold_id: string; seat_ids: string[]; payment_intent_id: string | null }>(sql`
      WITH h AS (
        UPDATE holds SET status = 'released', ended_at = now()
         WHERE order_id = ${input.orderId} AND status = 'active' RETURNING id
      ), s AS (
        UPDATE hold_seats SET released_at = now()
         WHERE hold_id IN (SELECT id FROM h) AND released_at IS NULL RETURNING seat_id
      )
      SELECT (SELECT id FROM h) AS hold_id, coalesce((SELECT array_agg(seat_id) FROM s), '{}') AS seat_ids,
             (SELECT payment_intent_id FROM payments WHERE order_id = ${input.orderId}) AS payment_intent_id`);
    const hold = released.rows[0];
    if (!hold?.hold_id) {
      if (ENDED.has(row.status)) return { status: row.status };
      throw new DomainError('order_not_releasable', `an order in status ${row.status} cannot be released`, {
        status: row.status,
      });
    }

    await tx.execute(sql`
      UPDATE orders SET status = 'released', version = version + 1, updated_at = now(),
             failure_reason = 'released_by_buyer'
       WHERE id = ${input.orderId}`);
    await appendEvent(tx, cause, 'HoldReleased', input.orderId, {
      orderId: input.orderId,
      holdId: hold.hold_id,
      seatIds: hold.seat_ids,
      reason: 'released_by_buyer',
    });
    if (hold.payment_intent_id) {
      await appendEvent(tx, cause, 'AuthorizationCancelRequested', input.orderId, {
        orderId: input.orderId,
        paymentIntentId: hold.payment_intent_id,
        reason: 'released_by_buyer',
      });
    }
    return { status: 'released' };
  });
}
