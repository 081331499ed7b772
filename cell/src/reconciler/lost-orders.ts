import { sql } from 'drizzle-orm';
import type Stripe from 'stripe';
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
 * The intents this cell made at Stripe whose order the ledger does not have: what a writer failover
 * under asynchronous replication loses (the order committed on the old writer, its PaymentIntent
 * created, authorized or even captured, and the commit never reached the replica that was promoted).
 * Nothing local points at them, so the order-driven pass cannot see them: this one starts from Stripe
 * (search by the cell's metadata over `windowMs`). A captured intent is refunded, an open one canceled,
 * both with the order's own idempotency keys (a second pass, or the saga's own call, is the same
 * Stripe operation). The order itself is not restored: its seats may have been sold again since.
 * `graceMs` leaves alone an intent so young that its order's commit may still be in flight.
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
  const known = await ctx.db.execute<{ id: string }>(
    sql`SELECT id FROM orders WHERE id = ANY(${sql.param(orderIds)}::uuid[])`,
  );
  const present = new Set(known.rows.map((r) => r.id));
  for (const pi of candidates) {
    const orderId = pi.metadata.orderId!;
    if (present.has(orderId)) continue;
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
