import { metrics, SpanKind, withSpan } from '@onsale/contracts';
import Stripe from 'stripe';

/** Counts each call by operation and outcome: `ok`, or the SDK's error type (card, idempotency, connection…). */
async function counted<T>(operation: string, call: () => Promise<T>): Promise<T> {
  try {
    // A client span per call, child of the consumer's (or webhook's) span.
    const result = await withSpan(`stripe ${operation}`, { kind: SpanKind.CLIENT, childOnly: true }, call);
    metrics.stripeCalls.inc({ operation, outcome: 'ok' });
    return result;
  } catch (err) {
    metrics.stripeCalls.inc({ operation, outcome: err instanceof Stripe.errors.StripeError ? err.type : 'error' });
    throw err;
  }
}

/**
 * Every request the cell makes to Stripe, in one place, so the contract test can run exactly
 * these against Stripe's own `stripe-mock`. Each mutation carries an idempotency key derived
 * from the causing event or the order: a retry after a crash reaches the same Stripe object
 * instead of making a second one. Metadata identifies the order and cell, never the buyer.
 */
export interface IntentMetadata {
  orderId: string;
  cellId: string;
  /** The concert event, so operators can find an onsale's payments at Stripe. */
  eventId: string;
}

export function createIntent(
  stripe: Stripe,
  input: { amount: number; currency: string; metadata: IntentMetadata },
): Promise<Stripe.PaymentIntent> {
  return counted('payment_intents.create', () =>
    stripe.paymentIntents.create(
      {
        amount: input.amount,
        currency: input.currency,
        capture_method: 'manual',
        // The buyer confirms in the page; a method that would redirect away from it is not offered.
        automatic_payment_methods: { enabled: true, allow_redirects: 'never' },
        metadata: { ...input.metadata },
      },
      // The order's key, not the request's: a request issued again (its saga step replayed after a writer
      // failover lost the first one's record) reaches the same intent instead of a second one.
      { idempotencyKey: `authorize:${input.metadata.orderId}` },
    ),
  );
}

export function captureIntent(stripe: Stripe, paymentIntentId: string, orderId: string) {
  return counted('payment_intents.capture', () =>
    stripe.paymentIntents.capture(paymentIntentId, {}, { idempotencyKey: `capture:${orderId}` }),
  );
}

export function cancelIntent(stripe: Stripe, paymentIntentId: string, orderId: string) {
  return counted('payment_intents.cancel', () =>
    stripe.paymentIntents.cancel(
      paymentIntentId,
      { cancellation_reason: 'abandoned' },
      { idempotencyKey: `cancel:${orderId}` },
    ),
  );
}

export function refundIntent(
  stripe: Stripe,
  input: { paymentIntentId: string; orderId: string; cellId: string; amount: number },
) {
  return counted('refunds.create', () =>
    stripe.refunds.create(
      {
        payment_intent: input.paymentIntentId,
        amount: input.amount,
        // Refund webhooks carry the refund's own metadata: this is how a cell recognises its refunds.
        metadata: { orderId: input.orderId, cellId: input.cellId },
      },
      { idempotencyKey: `refund:${input.orderId}` },
    ),
  );
}

export function retrieveIntent(stripe: Stripe, paymentIntentId: string) {
  return counted('payment_intents.retrieve', () => stripe.paymentIntents.retrieve(paymentIntentId));
}

/** The refunds of an intent, newest first (a charge.refunded webhook does not name its refund). */
export async function latestRefund(stripe: Stripe, paymentIntentId: string): Promise<Stripe.Refund | undefined> {
  const page = await counted('refunds.list', () => stripe.refunds.list({ payment_intent: paymentIntentId, limit: 1 }));
  return page.data[0];
}

/**
 * Finds an order's intent when the cell never recorded it (created at Stripe, then the local
 * commit was lost). Search lags writes by up to a minute at Stripe: only for reconciliation.
 */
export async function findIntentForOrder(stripe: Stripe, orderId: string): Promise<Stripe.PaymentIntent | undefined> {
  if (!/^[0-9a-f-]{36}$/.test(orderId)) throw new Error('order ids are uuids');
  const found = await counted('payment_intents.search', () =>
    stripe.paymentIntents.search({ query: `metadata['orderId']:'${orderId}'`, limit: 10 }),
  );
  return found.data.find((pi) => pi.status !== 'canceled') ?? found.data[0];
}
