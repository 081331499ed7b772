import { sql } from 'drizzle-orm';
import type { CellContext } from '../context';
import type { Tx } from '../db/client';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { releaseHoldSeats } from '../holds/release-seats';
import { requestAuthorizationCancel } from '../orders/cancel-authorization';
import { type LockedOrder, lockOrder, setOrderStatus } from '../orders/orders';
import { requestRefund } from '../orders/request-refund';
import { appendEvent, type Causation } from '../outbox/append';
import { MOVING } from './freeze';

export type SalesStatus = 'on_sale' | 'paused' | 'canceled';

export interface SalesStatusResult {
  eventId: string;
  status: SalesStatus;
  /** What the cancellation did in this call (zero for pause and resume, and for a repeated cancel). */
  canceled: { holdsReleased: number; refundsRequested: number; ticketsVoided: number; pendingCapture: number };
}

const BATCH = 200;

/**
 * Pauses, resumes or cancels an event's sale in this cell. Pause refuses new holds (live holds
 * run on); resume lifts that. Cancel is final: new holds are refused, then every order of the
 * event is ended in bounded batches (one transaction each, orders locked in id order like every
 * writer of the cell): unpaid orders are cancelled with their seats released and any
 * authorization cancelled; paid and ticketed orders go to refunding with RefundRequested for the
 * saga's payment worker, their tickets voided. An order whose capture is in flight is finished by
 * the saga (PaymentCaptured on a cancelled event refunds). Calling it again finishes what a
 * crashed call left and otherwise changes nothing.
 */
export async function setSalesStatus(
  ctx: CellContext,
  input: { eventId: string; status: SalesStatus; reason?: string; correlationId: string },
): Promise<SalesStatusResult> {
  await withWriteTx(ctx, async (tx) => {
    const ev = await tx.execute<{ sales_status: SalesStatus }>(
      sql`SELECT sales_status FROM events WHERE id = ${input.eventId} FOR UPDATE`,
    );
    const current = ev.rows[0]?.sales_status;
    if (!current) throw new DomainError('event_not_found', 'event not found in this cell', { eventId: input.eventId });
    if (current === 'canceled' && input.status !== 'canceled')
      throw new DomainError('event_canceled', 'the event is cancelled; its sale cannot restart', {
        eventId: input.eventId,
      });
    // Evacuation's freeze (freeze.ts) is lifted only by the mover, to the sale's state in the control plane.
    if ((current as string) === MOVING && input.status !== 'canceled')
      // 409, not the buyers' 503: the caller (the control plane) must wait for the move, not retry blindly.
      throw new DomainError('conflict', 'the event is moving between cells; change its sale after the move', {
        eventId: input.eventId,
        reason: 'event_moving',
      });
    if (current !== input.status) {
      await tx.execute(sql`
        UPDATE events SET sales_status = ${input.status}, sales_status_reason = ${input.reason ?? null}
         WHERE id = ${input.eventId}`);
    }
  });
  const canceled = { holdsReleased: 0, refundsRequested: 0, ticketsVoided: 0, pendingCapture: 0 };
  if (input.status === 'canceled') {
    const cause = { cellId: ctx.cellId, correlationId: input.correlationId, causationId: null };
    let after = '00000000-0000-0000-0000-000000000000';
    for (;;) {
      const batch = await withWriteTx(ctx, (tx) => cancelBatch(tx, cause, input.eventId, after));
      canceled.holdsReleased += batch.holdsReleased;
      canceled.refundsRequested += batch.refundsRequested;
      canceled.ticketsVoided += batch.ticketsVoided;
      canceled.pendingCapture += batch.pendingCapture;
      if (!batch.last) break;
      after = batch.last;
    }
  }
  return { eventId: input.eventId, status: input.status, canceled };
}

async function cancelBatch(tx: Tx, cause: Causation, eventId: string, after: string) {
  const ids = await tx.execute<{ id: string }>(sql`
    SELECT id FROM orders
     WHERE event_id = ${eventId} AND id > ${after} AND status IN ('pending_payment', 'confirmed', 'paid', 'ticketed')
     ORDER BY id LIMIT ${BATCH}`);
  const out = {
    holdsReleased: 0,
    refundsRequested: 0,
    ticketsVoided: 0,
    pendingCapture: 0,
    last: null as string | null,
  };
  for (const { id } of ids.rows) {
    out.last = id;
    const order = await lockOrder(tx, id);
    if (!order) continue;
    const orderCause = { ...cause, correlationId: order.correlation_id };
    if (order.status === 'pending_payment') {
      if (await cancelUnpaid(tx, orderCause, order, 'event_canceled')) out.holdsReleased++;
    } else if (order.status === 'paid' || order.status === 'ticketed') {
      out.ticketsVoided += await requestRefund(tx, orderCause, order, 'event_canceled');
      out.refundsRequested++;
    } else if (order.status === 'confirmed') {
      out.pendingCapture++;
    }
  }
  return out;
}

/** An unpaid order of a cancelled event: seats released, order cancelled, any authorization cancelled. */
export async function cancelUnpaid(tx: Tx, cause: Causation, order: LockedOrder, reason: string): Promise<boolean> {
  const released = await releaseHoldSeats(tx, order.id, ['active']);
  await setOrderStatus(tx, order, 'canceled', reason);
  if (released) await appendEvent(tx, cause, 'HoldReleased', order.id, { orderId: order.id, ...released, reason });
  const intent = await tx.execute<{ payment_intent_id: string }>(
    sql`SELECT payment_intent_id FROM payments WHERE order_id = ${order.id}`,
  );
  const pi = intent.rows[0]?.payment_intent_id;
  if (pi) await requestAuthorizationCancel(tx, cause, order.id, pi, reason);
  return released !== null;
}

/** The event's sale status, read inside the caller's transaction. */
export async function salesStatusOf(tx: Tx, eventId: string): Promise<SalesStatus | undefined> {
  const r = await tx.execute<{ sales_status: SalesStatus }>(sql`SELECT sales_status FROM events WHERE id = ${eventId}`);
  return r.rows[0]?.sales_status;
}
