import { eventPayloads, type Logger, SpanKind, tracingEnabled, validationIssues, withSpan } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import type Stripe from 'stripe';
import type { CellContext } from '../context';
import { withWriteTx } from '../db/tx';
import { DomainError } from '../errors';
import { appendEvent } from '../outbox/append';
import { type Fact, factsFromEvent, type RecordedPayment } from './facts';

export type WebhookOutcome = 'recorded' | 'duplicate' | 'ignored';

/** The events the saga needs; Stripe sends many more, which are acknowledged and dropped. */
const HANDLED = new Set([
  'payment_intent.amount_capturable_updated',
  'payment_intent.succeeded',
  'payment_intent.payment_failed',
  'payment_intent.canceled',
  'charge.refunded',
  'refund.created',
  'refund.updated',
]);

/** The intent an event is about, and the cell its metadata names (refunds carry their own). */
function subjectOf(event: Stripe.Event): { paymentIntentId: string; cellId: string | undefined } | null {
  const object = event.data.object as { id: string; payment_intent?: unknown; metadata?: Record<string, string> };
  const paymentIntentId = event.type.startsWith('payment_intent.') ? object.id : object.payment_intent;
  if (typeof paymentIntentId !== 'string') return null;
  return { paymentIntentId, cellId: object.metadata?.cellId };
}

/**
 * Takes in one verified Stripe event: records its id and the saga events it means in one
 * transaction, so the caller answers 2xx only once both are durable. A second delivery of
 * the same event finds its id and adds nothing. Every cell's endpoint receives the whole
 * account's events; another cell's are acknowledged and ignored. An intent of this cell that
 * is not recorded yet (the worker's commit is a moment behind Stripe's answer) is refused, so
 * Stripe delivers the event again later.
 */
export async function acceptStripeEvent(
  ctx: CellContext,
  stripe: Stripe,
  event: Stripe.Event,
  /** The request's logger (request id); the cell's otherwise. */
  log: Logger = ctx.log,
): Promise<WebhookOutcome> {
  const subject = HANDLED.has(event.type) ? subjectOf(event) : null;
  if (!subject || (subject.cellId !== undefined && subject.cellId !== ctx.cellId)) return 'ignored';

  const seen = await ctx.db.execute(sql`SELECT 1 FROM stripe_events WHERE id = ${event.id}`);
  if (seen.rows.length > 0) return 'duplicate';

  const found = await ctx.db.execute<{ order_id: string; correlation_id: string; status: string }>(sql`
    SELECT p.order_id, o.correlation_id, p.status
      FROM payments p JOIN orders o ON o.id = p.order_id WHERE p.payment_intent_id = ${subject.paymentIntentId}`);
  const row = found.rows[0];
  if (!row) {
    if (subject.cellId === undefined) return 'ignored';
    throw new DomainError('not_found', `payment intent ${subject.paymentIntentId} is not recorded in this cell yet`);
  }
  const payment: RecordedPayment = {
    orderId: row.order_id,
    correlationId: row.correlation_id,
    paymentIntentId: subject.paymentIntentId,
    status: row.status,
  };
  // Stripe knows no trace: the webhook continues the order's, from the intent's creation.
  return withSpan(
    `stripe.webhook ${event.type}`,
    {
      kind: SpanKind.CONSUMER,
      parent: await orderTraceparent(ctx, payment.orderId),
      attributes: { 'onsale.order_id': payment.orderId, 'stripe.event_id': event.id },
    },
    async () => {
      const facts = await factsFromEvent(stripe, event, payment);
      refuseIncomplete(event, facts);
      return withWriteTx(ctx, async (tx) => {
        const fresh = await tx.execute(sql`
          INSERT INTO stripe_events (id, type, payment_intent_id)
          VALUES (${event.id}, ${event.type}, ${payment.paymentIntentId}) ON CONFLICT (id) DO NOTHING`);
        if (fresh.rowCount === 0) return 'duplicate' as const;
        const cause = { cellId: ctx.cellId, correlationId: payment.correlationId, causationId: event.id };
        for (const fact of facts) await appendEvent(tx, cause, fact.type, payment.orderId, fact.payload);
        log.debug('stripe event applied', {
          orderId: payment.orderId,
          stripeEventId: event.id,
          stripeEventType: event.type,
          facts: facts.map((f) => f.type),
        });
        return 'recorded' as const;
      });
    },
  );
}

/**
 * A signed event that lacks what its saga events need (an amount, an id) is refused before
 * anything is written: 400 naming the field, not a 500 that Stripe would retry forever.
 */
function refuseIncomplete(event: Stripe.Event, facts: Fact[]): void {
  for (const fact of facts) {
    const parsed = eventPayloads[fact.type].safeParse(fact.payload);
    if (!parsed.success)
      throw new DomainError('validation_failed', `Stripe event ${event.id} lacks what its ${fact.type} needs`, {
        issues: validationIssues(parsed.error, 'data.object'),
      });
  }
}

/**
 * The trace context of the order's PaymentIntentCreated row, read only while tracing. The
 * newest rows come first (a backward scan of the primary key), and the row is seconds old.
 */
async function orderTraceparent(ctx: CellContext, orderId: string): Promise<string | null> {
  if (!tracingEnabled()) return null;
  const rows = await ctx.db.execute<{ traceparent: string | null }>(sql`
    SELECT envelope->>'traceparent' AS traceparent FROM outbox
     WHERE aggregate_id = ${orderId} AND event_type = 'PaymentIntentCreated' ORDER BY id DESC LIMIT 1`);
  return rows.rows[0]?.traceparent ?? null;
}
