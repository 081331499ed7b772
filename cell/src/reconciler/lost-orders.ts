import type { OrderStatus } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import { ENDED_UNPAID } from '../orders/state';
import type { PaymentDeps } from '../payments/deps';
import { cancelIntent, refundIntent } from '../payments/stripe-calls';

export type LostOrderFix = 'lost_order_refunded' | 'lost_order_canceled';

export interface LostOrdersReport {
  checked: number;
  fixed: { kind: LostOrderFix; orderId: string; paymentIntentId: string }[];
}

/** Intents still holding or having taken the buyer's money. */
const OPEN = new Set(['requires_payment_method', 'requires_confirmation', 'requires_action', 'requires_capture']);

/**
 * The intents this cell made at Stripe whose order the ledger does not have, or has ended unpaid with no
 * record of the intent: what a writer failover under asynchronous replication loses (the order, or its
 * payment row, committed on the old writer with its PaymentIntent created, authorized or even captured,
 * and the commit never reached the replica that was promoted). Nothing local points at them, so the
 * order-driven pass cannot see them: this one starts from Stripe (search by the cell's metadata over
 * `windowMs`). A captured intent is refunded, an open one canceled, both with the order's own idempotency
 * keys (a second pass, or the saga's own call, is the same Stripe operation). The order itself is not
 * restored: its seats may have been sold again since. Nor can it come back and find its intent canceled:
 * an order id is drawn at random when the hold is placed, so a buyer's retry after the failover is
 * another order, with an intent of its own. `graceMs` leaves alone an intent so young that its order's
 * commit may still be in flight.
 */
export async function reconcileLostOrders(
  { ctx, stripe }: PaymentDeps,
  options: { windowMs: number; graceMs: number },
): Promise<LostOrdersReport> {
  const now = Date.now();
  const since = Math.floor((now - options.windowMs) / 1000);
  const intents: Stripe.PaymentIntent[] = [];
  for (let page: string | undefined; ; ) {
    const found = await stripe.paymentIntents.search({
      query: `metadata['cellId']:'${ctx.cellId}' AND created>${since}`,
      limit: 100,
      ...(page && { page }),
    });
    intents.push(...found.data);
    if (!found.has_more || !found.next_page) break;
    page = found.next_page;
  }
  const candidates = intents.filter(
    (pi) =>
      /^[0-9a-f-]{36}$/.test(pi.metadata.orderId ?? '') &&
      pi.created * 1000 < now - options.graceMs &&
      (OPEN.has(pi.status) || (pi.status === 'succeeded' && pi.amount_received > 0)),
  );
  const report: LostOrdersReport = { checked: candidates.length, fixed: [] };
  if (candidates.length === 0) return report;

  const orderIds = [...new Set(candidates.map((pi) => pi.metadata.orderId!))];
  const known = await ctx.db.execute<{ id: string; status: string; payment_intent_id: string | null }>(sql`
    SELECT o.id, o.status, p.payment_intent_id
      FROM orders o LEFT JOIN payments p ON p.order_id = o.id WHERE o.id = ANY(${sql.param(orderIds)}::uuid[])`);
  // An order the ledger kept but whose payment it lost and that ended unpaid meanwhile (its hold lapsed
  // before the intent was found again) is as lost to this intent: nothing local will ever settle it. A live
  // one is the order-driven pass's to adopt; one that records its intent, the saga's.
  const kept = new Set(
    known.rows
      .filter((r) => r.payment_intent_id !== null || !ENDED_UNPAID.has(r.status as OrderStatus))
      .map((r) => r.id),
  );
  for (const pi of candidates) {
    const orderId = pi.metadata.orderId!;
    if (kept.has(orderId)) continue;
    try {
      if (pi.status === 'succeeded') {
        const refunded = await stripe.refunds.list({ payment_intent: pi.id, limit: 100 });
        const owed =
          pi.amount_received - refunded.data.reduce((sum, r) => sum + (r.status === 'failed' ? 0 : r.amount), 0);
        if (owed <= 0) continue;
        await refundIntent(stripe, { paymentIntentId: pi.id, orderId, cellId: ctx.cellId, amount: owed });
        report.fixed.push({ kind: 'lost_order_refunded', orderId, paymentIntentId: pi.id });
      } else {
        await cancelIntent(stripe, pi.id, orderId);
        report.fixed.push({ kind: 'lost_order_canceled', orderId, paymentIntentId: pi.id });
      }
      ctx.log.warn('intent of a lost order settled', {
        metric: 'reconciler_fixed',
        kind: report.fixed.at(-1)!.kind,
        orderId,
        paymentIntentId: pi.id,
      });
    } catch (err) {
      ctx.log.warn('settling a lost order failed', { orderId, paymentIntentId: pi.id, err });
    }
  }
  return report;
}
