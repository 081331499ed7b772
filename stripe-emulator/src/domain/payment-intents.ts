import type { Timers } from '../timers.js';
import { cardError, docUrl, invalidRequest, resourceMissing, unexpectedState } from './errors.js';
import type { EventLog } from './events.js';
import { newClientSecret, newId, unixNow } from './ids.js';
import { applyMetadata, type MetadataUpdate } from './metadata.js';
import type {
  CancellationReason,
  CaptureMethod,
  Charge,
  ListPage,
  PaymentError,
  PaymentIntent,
  PaymentIntentStatus,
  RequestOrigin,
  SearchPage,
} from './objects.js';
import { DEFAULT_LIMIT, type ListParams, listPage, matchesRange, type RangeFilter } from './pagination.js';
import { resolvePaymentMethod } from './payment-methods.js';
import { parsePaymentIntentQuery } from './search-query.js';
import { type Store, type StoredPaymentMethod, snapshot } from './store.js';
import type { Decline } from './test-payment-methods.js';

export interface CreatePaymentIntentParams {
  amount: number;
  currency: string;
  capture_method?: CaptureMethod | undefined;
  confirm?: boolean | undefined;
  payment_method?: string | undefined;
  payment_method_types?: string[] | undefined;
  automatic_payment_methods?: PaymentIntent['automatic_payment_methods'] | undefined;
  metadata?: MetadataUpdate | undefined;
  description?: string | undefined;
  receipt_email?: string | undefined;
  statement_descriptor_suffix?: string | undefined;
  transfer_group?: string | undefined;
}

export interface UpdatePaymentIntentParams {
  amount?: number | undefined;
  capture_method?: CaptureMethod | undefined;
  payment_method?: string | undefined;
  metadata?: MetadataUpdate | undefined;
  description?: string | undefined;
  receipt_email?: string | undefined;
}

export interface CapturePaymentIntentParams {
  amount_to_capture?: number | undefined;
  metadata?: MetadataUpdate | undefined;
}

export interface ListPaymentIntentsParams extends ListParams {
  created?: number | RangeFilter | undefined;
}

export interface SearchParams {
  query: string;
  limit?: number | undefined;
  page?: string | undefined;
}

export interface PaymentIntentTiming {
  /** How long a `pm_card_delayed*` authorization stays in `processing`. */
  processingDelayMs: number;
  /** How long an uncaptured authorization lives before Stripe cancels it (7 days on cards). */
  authorizationTtlMs: number;
}

const CONFIRMABLE: readonly PaymentIntentStatus[] = [
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
];
const CANCELABLE: readonly PaymentIntentStatus[] = [
  'requires_payment_method',
  'requires_capture',
  'requires_confirmation',
  'requires_action',
];
// Amount, capture method and payment method are fixed once confirmation has started.
const UPDATABLE = CONFIRMABLE;

/** Stripe's minimum charge amounts (in the currency's smallest unit) for common currencies. */
const MINIMUM_AMOUNT: Record<string, number> = { usd: 50, eur: 50, gbp: 30, cad: 50, aud: 50 };
const MAXIMUM_AMOUNT = 99_999_999;

/** The PaymentIntent state machine, as Stripe documents it for card payments. */
export class PaymentIntents {
  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
    private readonly timers: Timers,
    private readonly timing: PaymentIntentTiming,
  ) {}

  create(params: CreatePaymentIntentParams, origin: RequestOrigin): PaymentIntent {
    checkAmount(params.amount, params.currency, 'amount');
    if (params.confirm && params.payment_method === undefined) throw missingPaymentMethod();
    const paymentMethod =
      params.payment_method === undefined ? undefined : resolvePaymentMethod(this.store, params.payment_method);

    const id = newId('pi');
    const paymentIntent: PaymentIntent = {
      id,
      object: 'payment_intent',
      amount: params.amount,
      amount_capturable: 0,
      amount_received: 0,
      application: null,
      application_fee_amount: null,
      automatic_payment_methods:
        params.automatic_payment_methods ?? (params.payment_method_types ? null : { enabled: true }),
      canceled_at: null,
      cancellation_reason: null,
      capture_method: params.capture_method ?? 'automatic_async',
      client_secret: newClientSecret(id),
      confirmation_method: 'automatic',
      created: unixNow(),
      currency: params.currency,
      customer: null,
      description: params.description ?? null,
      last_payment_error: null,
      latest_charge: null,
      livemode: false,
      metadata: applyMetadata({}, params.metadata),
      next_action: null,
      on_behalf_of: null,
      payment_method: paymentMethod?.object.id ?? null,
      payment_method_options: {},
      payment_method_types: params.payment_method_types ?? ['card'],
      processing: null,
      receipt_email: params.receipt_email ?? null,
      review: null,
      setup_future_usage: null,
      shipping: null,
      statement_descriptor: null,
      statement_descriptor_suffix: params.statement_descriptor_suffix ?? null,
      status: paymentMethod ? 'requires_confirmation' : 'requires_payment_method',
      transfer_data: null,
      transfer_group: params.transfer_group ?? null,
    };
    this.store.paymentIntents.set(id, paymentIntent);
    this.store.counters.paymentIntentsCreated += 1;
    this.events.emit('payment_intent.created', paymentIntent, origin);

    if (params.confirm && paymentMethod) this.#confirm(paymentIntent, paymentMethod, origin);
    return snapshot(paymentIntent);
  }

  retrieve(id: string): PaymentIntent {
    return snapshot(this.#find(id));
  }

  /** Stripe has no payment_intent.updated event: updates are silent. */
  update(id: string, params: UpdatePaymentIntentParams): PaymentIntent {
    const paymentIntent = this.#find(id);
    const restricted = (['amount', 'capture_method', 'payment_method'] as const).find(
      (param) => params[param] !== undefined,
    );
    if (restricted && !UPDATABLE.includes(paymentIntent.status)) {
      throw unexpectedState(
        `You cannot update this PaymentIntent's ${restricted} because it has a status of ${paymentIntent.status}. ` +
          `Only a PaymentIntent with one of the following statuses may be updated: ${UPDATABLE.join(', ')}.`,
        snapshot(paymentIntent),
      );
    }
    if (params.amount !== undefined) {
      checkAmount(params.amount, paymentIntent.currency, 'amount');
      paymentIntent.amount = params.amount;
    }
    if (params.payment_method !== undefined) {
      paymentIntent.payment_method = resolvePaymentMethod(this.store, params.payment_method).object.id;
      paymentIntent.status = 'requires_confirmation';
    }
    if (params.capture_method !== undefined) paymentIntent.capture_method = params.capture_method;
    if (params.description !== undefined) paymentIntent.description = params.description;
    if (params.receipt_email !== undefined) paymentIntent.receipt_email = params.receipt_email;
    paymentIntent.metadata = applyMetadata(paymentIntent.metadata, params.metadata);
    return snapshot(paymentIntent);
  }

  confirm(id: string, params: { payment_method?: string | undefined }, origin: RequestOrigin): PaymentIntent {
    const paymentIntent = this.#find(id);
    if (!CONFIRMABLE.includes(paymentIntent.status)) {
      throw unexpectedState(
        `You cannot confirm this PaymentIntent because it has a status of ${paymentIntent.status}. ` +
          `Only a PaymentIntent with one of the following statuses may be confirmed: ${CONFIRMABLE.join(', ')}.`,
        snapshot(paymentIntent),
      );
    }
    const reference = params.payment_method ?? paymentIntent.payment_method;
    if (reference === null) throw missingPaymentMethod(snapshot(paymentIntent));
    this.#confirm(paymentIntent, resolvePaymentMethod(this.store, reference), origin);
    return snapshot(paymentIntent);
  }

  capture(id: string, params: CapturePaymentIntentParams, origin: RequestOrigin): PaymentIntent {
    const paymentIntent = this.#find(id);
    if (paymentIntent.status !== 'requires_capture') {
      throw unexpectedState(
        `This PaymentIntent could not be captured because it has a status of ${paymentIntent.status}. ` +
          'Only a PaymentIntent with one of the following statuses may be captured: requires_capture.',
        snapshot(paymentIntent),
      );
    }
    const amount = params.amount_to_capture ?? paymentIntent.amount_capturable;
    if (amount > paymentIntent.amount_capturable) {
      throw invalidRequest(
        `The amount_to_capture (${amount}) cannot be greater than the amount_capturable (${paymentIntent.amount_capturable}) of this PaymentIntent.`,
        { code: 'amount_too_large', param: 'amount_to_capture', paymentIntent: snapshot(paymentIntent) },
      );
    }
    const charge = this.#latestCharge(paymentIntent);
    charge.captured = true;
    charge.amount_captured = amount;

    paymentIntent.status = 'succeeded';
    paymentIntent.amount_received = amount;
    paymentIntent.amount_capturable = 0;
    paymentIntent.metadata = applyMetadata(paymentIntent.metadata, params.metadata);
    this.store.counters.captures += 1;
    this.events.emit('payment_intent.succeeded', paymentIntent, origin);
    return snapshot(paymentIntent);
  }

  cancel(
    id: string,
    params: { cancellation_reason?: CancellationReason | undefined },
    origin: RequestOrigin,
  ): PaymentIntent {
    const paymentIntent = this.#find(id);
    if (!CANCELABLE.includes(paymentIntent.status)) {
      throw unexpectedState(
        `You cannot cancel this PaymentIntent because it has a status of ${paymentIntent.status}. ` +
          `Only a PaymentIntent with one of the following statuses may be canceled: ${CANCELABLE.join(', ')}.`,
        snapshot(paymentIntent),
      );
    }
    this.#cancel(paymentIntent, params.cancellation_reason ?? null, origin);
    this.store.counters.cancellations += 1;
    return snapshot(paymentIntent);
  }

  list(params: ListPaymentIntentsParams): ListPage<PaymentIntent> {
    const matching = [...this.store.paymentIntents.values()]
      .reverse()
      .filter((paymentIntent) => matchesRange(paymentIntent.created, params.created));
    const page = listPage(matching, params, '/v1/payment_intents', 'payment_intent');
    return { ...page, data: page.data.map(snapshot) };
  }

  /**
   * Stripe's search index lags writes by up to a minute; this one is immediately consistent,
   * so it cannot reveal code that wrongly relies on search for read-after-write.
   */
  search(params: SearchParams): SearchPage<PaymentIntent> {
    const matches = parsePaymentIntentQuery(params.query);
    const limit = params.limit ?? DEFAULT_LIMIT;
    const offset = params.page === undefined ? 0 : decodePageToken(params.page);
    const found = [...this.store.paymentIntents.values()].reverse().filter(matches);
    const hasMore = offset + limit < found.length;
    return {
      object: 'search_result',
      data: found.slice(offset, offset + limit).map(snapshot),
      has_more: hasMore,
      next_page: hasMore ? encodePageToken(offset + limit) : null,
      url: '/v1/payment_intents/search',
    };
  }

  #find(id: string): PaymentIntent {
    const paymentIntent = this.store.paymentIntents.get(id);
    if (!paymentIntent) throw resourceMissing('payment_intent', id, 'intent');
    return paymentIntent;
  }

  #latestCharge(paymentIntent: PaymentIntent): Charge {
    const charge =
      paymentIntent.latest_charge === null ? undefined : this.store.charges.get(paymentIntent.latest_charge);
    if (!charge) throw new Error(`PaymentIntent ${paymentIntent.id} has no charge`);
    return charge;
  }

  #confirm(paymentIntent: PaymentIntent, paymentMethod: StoredPaymentMethod, origin: RequestOrigin): void {
    this.store.counters.confirmations += 1;
    paymentIntent.payment_method = paymentMethod.object.id;
    paymentIntent.last_payment_error = null;

    const { behaviour } = paymentMethod;
    switch (behaviour.kind) {
      case 'authorize':
        this.#authorize(paymentIntent, paymentMethod, origin);
        return;
      case 'decline': {
        const failure = this.#decline(paymentIntent, paymentMethod, behaviour.decline, origin);
        throw cardError(failure, snapshot(paymentIntent));
      }
      case 'delayed': {
        paymentIntent.status = 'processing';
        this.events.emit('payment_intent.processing', paymentIntent, origin);
        // The network's answer arrives later, outside any request: its events carry no request.
        this.timers.schedule(this.timing.processingDelayMs, () => {
          if (paymentIntent.status !== 'processing') return;
          if (behaviour.outcome.kind === 'authorize') this.#authorize(paymentIntent, paymentMethod, null);
          else this.#decline(paymentIntent, paymentMethod, behaviour.outcome.decline, null);
        });
        return;
      }
    }
  }

  #authorize(paymentIntent: PaymentIntent, paymentMethod: StoredPaymentMethod, origin: RequestOrigin | null): void {
    const charge = this.#createCharge(paymentIntent, paymentMethod, null);
    this.store.counters.authorizations += 1;

    if (paymentIntent.capture_method === 'manual') {
      paymentIntent.status = 'requires_capture';
      paymentIntent.amount_capturable = paymentIntent.amount;
      this.events.emit('payment_intent.amount_capturable_updated', paymentIntent, origin);
      this.#expireAuthorizationLater(paymentIntent);
      return;
    }
    charge.captured = true;
    charge.amount_captured = charge.amount;
    paymentIntent.status = 'succeeded';
    paymentIntent.amount_received = paymentIntent.amount;
    this.events.emit('payment_intent.succeeded', paymentIntent, origin);
  }

  #decline(
    paymentIntent: PaymentIntent,
    paymentMethod: StoredPaymentMethod,
    decline: Decline,
    origin: RequestOrigin | null,
  ): PaymentError {
    const charge = this.#createCharge(paymentIntent, paymentMethod, decline);
    const failure: PaymentError = {
      type: 'card_error',
      code: decline.code,
      ...(decline.declineCode && { decline_code: decline.declineCode }),
      message: decline.message,
      charge: charge.id,
      doc_url: docUrl(decline.code),
      payment_method: snapshot(paymentMethod.object),
    };
    // A failed attempt detaches the payment method: the buyer must supply another one.
    paymentIntent.status = 'requires_payment_method';
    paymentIntent.payment_method = null;
    paymentIntent.last_payment_error = failure;
    this.store.counters.declines += 1;
    this.events.emit('payment_intent.payment_failed', paymentIntent, origin);
    return failure;
  }

  #cancel(paymentIntent: PaymentIntent, reason: CancellationReason | null, origin: RequestOrigin | null): void {
    if (paymentIntent.status === 'requires_capture') {
      // Canceling an authorization releases the held funds; Stripe reports that on the charge.
      const charge = this.#latestCharge(paymentIntent);
      charge.amount_refunded = charge.amount;
      charge.refunded = true;
    }
    paymentIntent.status = 'canceled';
    paymentIntent.amount_capturable = 0;
    paymentIntent.canceled_at = unixNow();
    paymentIntent.cancellation_reason = reason;
    this.events.emit('payment_intent.canceled', paymentIntent, origin);
  }

  #expireAuthorizationLater(paymentIntent: PaymentIntent): void {
    this.timers.schedule(this.timing.authorizationTtlMs, () => {
      if (paymentIntent.status === 'requires_capture') this.#cancel(paymentIntent, 'automatic', null);
    });
  }

  #createCharge(paymentIntent: PaymentIntent, paymentMethod: StoredPaymentMethod, decline: Decline | null): Charge {
    const charge: Charge = {
      id: newId('ch'),
      object: 'charge',
      amount: paymentIntent.amount,
      amount_captured: 0,
      amount_refunded: 0,
      balance_transaction: null,
      captured: false,
      created: unixNow(),
      currency: paymentIntent.currency,
      description: paymentIntent.description,
      failure_code: decline?.code ?? null,
      failure_message: decline?.message ?? null,
      livemode: false,
      metadata: { ...paymentIntent.metadata },
      outcome: decline
        ? {
            network_status: 'declined_by_network',
            reason: decline.declineCode ?? null,
            seller_message: 'The bank did not return any further details with this decline.',
            type: 'issuer_declined',
          }
        : {
            network_status: 'approved_by_network',
            reason: null,
            seller_message: 'Payment complete.',
            type: 'authorized',
          },
      paid: decline === null,
      payment_intent: paymentIntent.id,
      payment_method: paymentMethod.object.id,
      payment_method_details: {
        type: 'card',
        card: { brand: paymentMethod.object.card.brand, last4: paymentMethod.object.card.last4 },
      },
      refunded: false,
      status: decline ? 'failed' : 'succeeded',
    };
    this.store.charges.set(charge.id, charge);
    paymentIntent.latest_charge = charge.id;
    return charge;
  }
}

function checkAmount(amount: number, currency: string, param: string): void {
  const minimum = MINIMUM_AMOUNT[currency] ?? 1;
  if (amount < minimum) {
    throw invalidRequest(`Amount must be at least ${minimum} in the smallest unit of ${currency}.`, {
      code: 'amount_too_small',
      param,
    });
  }
  if (amount > MAXIMUM_AMOUNT) {
    throw invalidRequest(`Amount must be no more than ${MAXIMUM_AMOUNT}.`, { code: 'amount_too_large', param });
  }
}

function missingPaymentMethod(paymentIntent?: PaymentIntent): Error {
  const message =
    "You cannot confirm this PaymentIntent because it's missing a payment method. You can either update the " +
    'PaymentIntent with a payment method and then confirm it again, or confirm it again directly with a payment method.';
  return paymentIntent
    ? unexpectedState(message, paymentIntent)
    : invalidRequest(message, { code: 'parameter_missing', param: 'payment_method' });
}

function encodePageToken(offset: number): string {
  return Buffer.from(`offset:${offset}`).toString('base64url');
}

function decodePageToken(token: string): number {
  const match = /^offset:(\d+)$/.exec(Buffer.from(token, 'base64url').toString());
  if (!match?.[1]) throw invalidRequest(`Invalid page: ${token}`, { param: 'page' });
  return Number(match[1]);
}
