// Stripe's API objects, as the emulator stores and returns them. Only the fields the platform
// can observe are modelled; the rest of Stripe's fields are present with their neutral values
// so that snapshots look like what the SDK's types promise.

export type Metadata = Record<string, string>;

export type PaymentIntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded';

export type CaptureMethod = 'automatic' | 'automatic_async' | 'manual';

export type CancellationReason = 'abandoned' | 'automatic' | 'duplicate' | 'fraudulent' | 'requested_by_customer';

export interface CardDetails {
  brand: string;
  last4: string;
  exp_month: number;
  exp_year: number;
  funding: 'credit';
  country: 'US';
}

export interface PaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card';
  card: CardDetails;
  created: number;
  customer: null;
  livemode: false;
  metadata: Metadata;
}

export interface PaymentError {
  type: 'card_error';
  code: string;
  decline_code?: string;
  message: string;
  charge?: string;
  doc_url: string;
  payment_method: PaymentMethod;
}

export interface PaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_capturable: number;
  amount_received: number;
  application: null;
  application_fee_amount: null;
  automatic_payment_methods: { enabled: boolean; allow_redirects?: 'always' | 'never' } | null;
  canceled_at: number | null;
  cancellation_reason: CancellationReason | null;
  capture_method: CaptureMethod;
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: null;
  description: string | null;
  last_payment_error: PaymentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Metadata;
  next_action: null;
  on_behalf_of: null;
  payment_method: string | null;
  payment_method_options: Record<string, never>;
  payment_method_types: string[];
  processing: null;
  receipt_email: string | null;
  review: null;
  setup_future_usage: null;
  shipping: null;
  statement_descriptor: null;
  statement_descriptor_suffix: string | null;
  status: PaymentIntentStatus;
  transfer_data: null;
  transfer_group: string | null;
}

export interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  amount_refunded: number;
  balance_transaction: null;
  captured: boolean;
  created: number;
  currency: string;
  description: string | null;
  failure_code: string | null;
  failure_message: string | null;
  livemode: false;
  metadata: Metadata;
  outcome: {
    network_status: 'approved_by_network' | 'declined_by_network';
    reason: string | null;
    seller_message: string;
    type: 'authorized' | 'issuer_declined';
  };
  paid: boolean;
  payment_intent: string;
  payment_method: string;
  payment_method_details: { type: 'card'; card: Pick<CardDetails, 'brand' | 'last4'> };
  refunded: boolean;
  status: 'succeeded' | 'failed';
}

export type RefundReason = 'duplicate' | 'fraudulent' | 'requested_by_customer';

export interface Refund {
  id: string;
  object: 'refund';
  amount: number;
  balance_transaction: null;
  charge: string;
  created: number;
  currency: string;
  metadata: Metadata;
  payment_intent: string;
  reason: RefundReason | null;
  receipt_number: null;
  source_transfer_reversal: null;
  status: 'succeeded';
  transfer_reversal: null;
}

export type StripeObject = PaymentIntent | Charge | Refund;

export type EventType =
  | 'payment_intent.created'
  | 'payment_intent.processing'
  | 'payment_intent.amount_capturable_updated'
  | 'payment_intent.succeeded'
  | 'payment_intent.payment_failed'
  | 'payment_intent.canceled'
  | 'charge.refunded'
  | 'refund.created'
  | 'refund.updated';

export interface StripeEvent {
  id: string;
  object: 'event';
  api_version: string;
  created: number;
  data: { object: StripeObject };
  livemode: false;
  pending_webhooks: number;
  /** The API request that caused the event; both null for events Stripe raises on its own. */
  request: { id: string | null; idempotency_key: string | null };
  type: EventType;
}

/** Which API request caused a state change, carried into the events it emits. */
export interface RequestOrigin {
  requestId: string;
  idempotencyKey: string | null;
}

export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export interface SearchPage<T> {
  object: 'search_result';
  data: T[];
  has_more: boolean;
  next_page: string | null;
  url: string;
}
