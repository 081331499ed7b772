import type { PaymentIntent } from './objects.js';

// The PaymentIntent fields Stripe's object reference marks "retrievable with publishable key".
// A publishable key (Stripe.js, in the buyer's browser) sees only these: amounts captured and
// received, the charge, metadata, the customer, transfer and statement details stay server-side.
const PUBLISHABLE_FIELDS = [
  'id',
  'object',
  'amount',
  'automatic_payment_methods',
  'canceled_at',
  'cancellation_reason',
  'capture_method',
  'client_secret',
  'confirmation_method',
  'created',
  'currency',
  'description',
  'last_payment_error',
  'livemode',
  'next_action',
  'payment_method',
  'payment_method_types',
  'processing',
  'receipt_email',
  'setup_future_usage',
  'shipping',
  'status',
] as const satisfies readonly (keyof PaymentIntent)[];

export type PublishablePaymentIntent = Pick<PaymentIntent, (typeof PUBLISHABLE_FIELDS)[number]>;

/** What a publishable key gets back for a PaymentIntent. */
export function publishablePaymentIntent(paymentIntent: PaymentIntent): PublishablePaymentIntent {
  const view: Partial<Record<keyof PaymentIntent, unknown>> = {};
  for (const field of PUBLISHABLE_FIELDS) view[field] = paymentIntent[field];
  return view as PublishablePaymentIntent;
}
