import type { OrderStatus } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import type { Tx } from '../db/client';
import { withWriteTx } from '../db/tx';
import { lockOrder } from '../orders/orders';
import { requestTickets } from '../orders/request-tickets';
import { ENDED_UNPAID } from '../orders/state';
import { appendEvent, type Causation } from '../outbox/append';
import type { PaymentDeps } from '../payments/deps';
import { recordIntent } from '../payments/record-intent';
import { findIntentForOrder, retrieveIntent } from '../payments/stripe-calls';

export interface ReconcileOptions {
  /** How long an order may sit in a stage before it counts as stuck (and between two pushes). */
  graceMs: number;
  batchSize: number;
}

export type FixKind =
  | 'ticketing_retried'
  | 'capture_observed'
  | 'capture_retried'
  | 'capture_impossible'
  | 'authorization_observed'
  | 'intent_recorded'
  | 'intent_requested'
  | 'captured_after_release'
  | 'cancel_retried'
  | 'cancel_observed'
  | 'refund_retried';

export interface ReconcileReport {
  checked: number;
  fixed: { kind: FixKind; orderId: string }[];
}

type Candidate = {
  id: string;
  status: OrderStatus;
  event_id: string;
  amount: number;
  currency: string;
  user_id: string;
  correlation_id: string;
  payment_intent_id: string | null;
  payment_status: string | null;
};

type Push = { kind: FixKind; write: (tx: Tx, cause: Causation) => Promise<unknown> };

const OPEN_INTENT = new Set([
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'requires_capture',
]);

/**
 * One pass of the reconciler: finds orders stuck in a stage for longer than the grace period,
 * compares them with Stripe (retrieve, or search by metadata when the cell never recorded an
 * intent) and pushes each forward with the event or command it is missing. Every push is
 * idempotent: the saga ignores what it already knows and Stripe calls carry the order's keys.
 * Each push re-checks the order's state under its lock and restarts its grace period.
 */
export async function reconcileOnce(deps: PaymentDeps, options: ReconcileOptions): Promise<ReconcileReport> {
  const { ctx } = deps;
  // Unpaid pending orders are many during an onsale and usually fine: they go last in the batch.
  const stuck = await ctx.db.execute<Candidate>(sql`
    SELECT o.id, o.status, o.event_id, o.amount, o.currency, o.user_id, o.correlation_id,
           p.payment_intent_id, p.status AS payment_status
      FROM orders o LEFT JOIN payments p ON p.order_id = o.id
     WHERE o.updated_at < now() - make_interval(secs => ${options.graceMs / 1000})
       AND (o.status IN ('pending_payment', 'confirmed', 'paid', 'refunding')
            OR (o.status = ANY(${sql.param([...ENDED_UNPAID])}::text[]) AND p.status NOT IN ('canceled', 'refunded')))
     ORDER BY o.status = 'pending_payment', o.updated_at LIMIT ${options.batchSize}`);

  const report: ReconcileReport = { checked: stuck.rows.length, fixed: [] };
  for (const order of stuck.rows) {
    try {
      const push = await decide(deps, order);
      if (push && (await apply(deps, order, push))) {
        report.fixed.push({ kind: push.kind, orderId: order.id });
        ctx.log.info('reconciler fixed', { metric: 'reconciler_fixed', kind: push.kind, orderId: order.id });
      }
    } catch (err) {
      // One order's trouble (Stripe unreachable for it, say) must not stop the pass.
      ctx.log.warn('reconcile failed', { orderId: order.id, err });
    }
  }
  return report;
}

/** What the order is missing, judged from Stripe's view of its intent. Runs outside any transaction. */
async function decide({ ctx, stripe }: PaymentDeps, order: Candidate): Promise<Push | null> {
  const orderId = order.id;
  if (order.status === 'paid') {
    return {
      kind: 'ticketing_retried',
      write: (tx, cause) => requestTickets(tx, cause, order),
    };
  }
  if (!order.payment_intent_id) {
    if (order.status !== 'pending_payment') return null;
    const found = await findIntentForOrder(stripe, orderId);
    if (found) return recordLostIntent(ctx.cellId, orderId, found);
    // No intent anywhere: its request was dead-lettered or lost. Asked again, the payment worker reaches Stripe
    // with the order's own key (authorize:<orderId>), so a request still retrying meets the same intent.
    return {
      kind: 'intent_requested',
      write: (tx, cause) =>
        appendEvent(tx, cause, 'PaymentAuthorizationRequested', orderId, {
          orderId,
          amount: order.amount,
          currency: order.currency,
          userId: order.user_id,
        }),
    };
  }
  const paymentIntentId = order.payment_intent_id;
  const intent = await retrieveIntent(stripe, paymentIntentId);
  const amount = intent.amount;

  if (order.status === 'pending_payment') {
    if (intent.status !== 'requires_capture' && intent.status !== 'succeeded') return null;
    // The authorization webhook was lost or is very late.
    return {
      kind: 'authorization_observed',
      write: (tx, cause) => appendEvent(tx, cause, 'PaymentAuthorized', orderId, { orderId, paymentIntentId, amount }),
    };
  }
  if (order.status === 'confirmed') {
    if (intent.status === 'succeeded') {
      return {
        kind: 'capture_observed',
        write: (tx, cause) =>
          appendEvent(tx, cause, 'PaymentCaptured', orderId, {
            orderId,
            paymentIntentId,
            amount: intent.amount_received,
          }),
      };
    }
    if (intent.status === 'requires_capture') {
      return {
        kind: 'capture_retried',
        write: (tx, cause) => appendEvent(tx, cause, 'CaptureRequested', orderId, { orderId, paymentIntentId, amount }),
      };
    }
    if (intent.status === 'canceled') {
      return {
        kind: 'capture_impossible',
        write: (tx, cause) =>
          appendEvent(tx, cause, 'CaptureFailed', orderId, {
            orderId,
            paymentIntentId,
            reason: `authorization ${intent.cancellation_reason ?? 'canceled'}`,
          }),
      };
    }
    return null;
  }
  if (order.status === 'refunding') {
    return {
      kind: 'refund_retried',
      write: (tx, cause) =>
        appendEvent(tx, cause, 'RefundRequested', orderId, {
          orderId,
          paymentIntentId,
          amount: intent.amount_received,
          reason: 'reconciler',
        }),
    };
  }
  // The order ended unpaid: any money it moved must go back.
  if (intent.status === 'succeeded') {
    // The saga records the incident and asks for the refund when it learns of the capture.
    return {
      kind: 'captured_after_release',
      write: (tx, cause) =>
        appendEvent(tx, cause, 'PaymentCaptured', orderId, {
          orderId,
          paymentIntentId,
          amount: intent.amount_received,
        }),
    };
  }
  if (OPEN_INTENT.has(intent.status)) {
    return {
      kind: 'cancel_retried',
      write: (tx, cause) =>
        appendEvent(tx, cause, 'AuthorizationCancelRequested', orderId, {
          orderId,
          paymentIntentId,
          reason: 'reconciler',
        }),
    };
  }
  if (intent.status === 'canceled') {
    return {
      kind: 'cancel_observed',
      write: (tx, cause) => appendEvent(tx, cause, 'AuthorizationCanceled', orderId, { orderId, paymentIntentId }),
    };
  }
  return null;
}

/** An intent Stripe has for the order but the cell never recorded (its commit was lost). */
function recordLostIntent(cellId: string, orderId: string, intent: Stripe.PaymentIntent): Push | null {
  if (intent.metadata.cellId !== cellId) return null;
  return {
    kind: 'intent_recorded',
    write: async (tx, cause) => {
      if (!(await recordIntent(tx, orderId, intent))) return;
      await appendEvent(tx, cause, 'PaymentIntentCreated', orderId, {
        orderId,
        paymentIntentId: intent.id,
        amount: intent.amount,
      });
    },
  };
}

/** Writes the push if the order is still where the reconciler found it, and restarts its grace period. */
async function apply({ ctx }: PaymentDeps, order: Candidate, push: Push): Promise<boolean> {
  return withWriteTx(ctx, async (tx) => {
    const locked = await lockOrder(tx, order.id);
    if (locked?.status !== order.status) return false;
    await push.write(tx, { cellId: ctx.cellId, correlationId: order.correlation_id, causationId: 'reconciler' });
    await tx.execute(sql`UPDATE orders SET updated_at = now() WHERE id = ${order.id}`);
    return true;
  });
}
