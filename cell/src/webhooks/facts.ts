import type { EventPayload, EventType } from '@onsale/contracts';
import type Stripe from 'stripe';
import { latestRefund, retrieveIntent } from '../payments/stripe-calls';

export type Fact = { [T in EventType]: { type: T; payload: EventPayload<T> } }[EventType];

/** The cell's record of an intent, as the webhook finds it. */
export interface RecordedPayment {
  orderId: string;
  correlationId: string;
  paymentIntentId: string;
  status: string;
}

/** How far a payment has come; a payload behind the record is a late or reordered delivery. */
const STAGE: Record<string, number> = {
  requires_payment_method: 0,
  requires_confirmation: 0,
  requires_action: 0,
  processing: 0,
  failed: 0,
  requires_capture: 1,
  authorized: 1,
  succeeded: 2,
  captured: 2,
  canceled: 3,
  refunded: 3,
};
const stage = (status: string) => STAGE[status] ?? 0;

/** What an intent in this state means for the saga. The saga ignores what it already knows. */
export function factsFromIntent(intent: Stripe.PaymentIntent, orderId: string): Fact[] {
  const paymentIntentId = intent.id;
  switch (intent.status) {
    case 'requires_capture':
      return [{ type: 'PaymentAuthorized', payload: { orderId, paymentIntentId, amount: intent.amount } }];
    case 'succeeded':
      // Captured implies authorized: say both, so a lost or late authorization webhook cannot strand the order.
      return [
        { type: 'PaymentAuthorized', payload: { orderId, paymentIntentId, amount: intent.amount } },
        { type: 'PaymentCaptured', payload: { orderId, paymentIntentId, amount: intent.amount_received } },
      ];
    case 'canceled':
      return [{ type: 'AuthorizationCanceled', payload: { orderId, paymentIntentId } }];
    case 'requires_payment_method': {
      const error = intent.last_payment_error;
      if (!error) return [];
      const reason = [error.type, error.code, error.decline_code].filter(Boolean).join(':') || 'payment_failed';
      return [{ type: 'PaymentFailed', payload: { orderId, paymentIntentId, reason } }];
    }
    default:
      return [];
  }
}

/**
 * Maps a verified Stripe event to saga events. The payload is trusted when it moves the
 * record forward. When it disagrees with the record (it is behind it, or it reports a failure
 * the buyer may since have recovered from with another card), the intent is fetched again
 * and the fresh object decides. Called outside any transaction: it may call Stripe.
 */
export async function factsFromEvent(stripe: Stripe, event: Stripe.Event, payment: RecordedPayment): Promise<Fact[]> {
  const { orderId, paymentIntentId } = payment;
  if (event.type.startsWith('payment_intent.')) {
    const payload = event.data.object as Stripe.PaymentIntent;
    const disagrees = event.type === 'payment_intent.payment_failed' || stage(payload.status) <= stage(payment.status);
    return factsFromIntent(disagrees ? await retrieveIntent(stripe, paymentIntentId) : payload, orderId);
  }
  const refund =
    event.type === 'charge.refunded'
      ? await latestRefund(stripe, paymentIntentId)
      : (event.data.object as Stripe.Refund);
  if (!refund || (refund.status !== 'succeeded' && refund.status !== 'pending')) return [];
  return [{ type: 'Refunded', payload: { orderId, paymentIntentId, refundId: refund.id } }];
}
