import { invalidRequest, resourceMissing, unexpectedState } from './errors.js';
import type { EventLog } from './events.js';
import { newId, unixNow } from './ids.js';
import { applyMetadata, type MetadataUpdate } from './metadata.js';
import type { Charge, ListPage, PaymentIntent, Refund, RefundReason, RequestOrigin } from './objects.js';
import { type ListParams, listPage } from './pagination.js';
import { type Store, snapshot } from './store.js';

export interface CreateRefundParams {
  payment_intent?: string | undefined;
  charge?: string | undefined;
  amount?: number | undefined;
  reason?: RefundReason | undefined;
  metadata?: MetadataUpdate | undefined;
}

export interface ListRefundsParams extends ListParams {
  payment_intent?: string | undefined;
  charge?: string | undefined;
}

/** Refunds of captured card payments, which settle immediately in test mode. */
export class Refunds {
  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
  ) {}

  create(params: CreateRefundParams, origin: RequestOrigin): Refund {
    const charge = this.#refundableCharge(params);
    const remaining = charge.amount_captured - charge.amount_refunded;
    if (remaining <= 0) {
      throw invalidRequest(`Charge ${charge.id} has already been refunded.`, { code: 'charge_already_refunded' });
    }
    const amount = params.amount ?? remaining;
    if (amount > remaining) {
      throw invalidRequest(`Refund amount (${amount}) is greater than unrefunded amount on charge (${remaining})`, {
        code: 'amount_too_large',
        param: 'amount',
      });
    }

    const refund: Refund = {
      id: newId('re'),
      object: 'refund',
      amount,
      balance_transaction: null,
      charge: charge.id,
      created: unixNow(),
      currency: charge.currency,
      metadata: applyMetadata({}, params.metadata),
      payment_intent: charge.payment_intent,
      reason: params.reason ?? null,
      receipt_number: null,
      source_transfer_reversal: null,
      status: 'succeeded',
      transfer_reversal: null,
    };
    this.store.refunds.set(refund.id, refund);
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount_captured;
    this.store.counters.refunds += 1;

    this.events.emit('refund.created', refund, origin);
    this.events.emit('charge.refunded', charge, origin);
    return snapshot(refund);
  }

  retrieve(id: string): Refund {
    return snapshot(this.#find(id));
  }

  update(id: string, params: { metadata?: MetadataUpdate | undefined }, origin: RequestOrigin): Refund {
    const refund = this.#find(id);
    refund.metadata = applyMetadata(refund.metadata, params.metadata);
    this.events.emit('refund.updated', refund, origin);
    return snapshot(refund);
  }

  list(params: ListRefundsParams): ListPage<Refund> {
    const matching = [...this.store.refunds.values()]
      .reverse()
      .filter(
        (refund) =>
          (params.payment_intent === undefined || refund.payment_intent === params.payment_intent) &&
          (params.charge === undefined || refund.charge === params.charge),
      );
    const page = listPage(matching, params, '/v1/refunds', 'refund');
    return { ...page, data: page.data.map(snapshot) };
  }

  #find(id: string): Refund {
    const refund = this.store.refunds.get(id);
    if (!refund) throw resourceMissing('refund', id, 'id');
    return refund;
  }

  #refundableCharge(params: CreateRefundParams): Charge {
    if (params.payment_intent !== undefined && params.charge !== undefined) {
      throw invalidRequest('You can only pass one of charge or payment_intent.', { param: 'payment_intent' });
    }
    if (params.charge !== undefined) {
      const charge = this.store.charges.get(params.charge);
      if (!charge) throw resourceMissing('charge', params.charge, 'charge');
      if (!charge.captured) {
        throw invalidRequest(`Charge ${charge.id} has not been captured. Cancel its PaymentIntent instead.`, {
          code: 'charge_not_refundable',
          param: 'charge',
        });
      }
      return charge;
    }
    if (params.payment_intent === undefined) {
      throw invalidRequest(
        'One of the following params should be provided for this request: payment_intent or charge.',
        {
          code: 'parameter_missing',
        },
      );
    }
    const paymentIntent = this.store.paymentIntents.get(params.payment_intent);
    if (!paymentIntent) throw resourceMissing('payment_intent', params.payment_intent, 'payment_intent');
    if (paymentIntent.status !== 'succeeded' || paymentIntent.latest_charge === null) {
      throw unexpectedState(notRefundableMessage(paymentIntent), snapshot(paymentIntent));
    }
    const charge = this.store.charges.get(paymentIntent.latest_charge);
    if (!charge) throw new Error(`PaymentIntent ${paymentIntent.id} has no charge`);
    return charge;
  }
}

function notRefundableMessage(paymentIntent: PaymentIntent): string {
  return paymentIntent.status === 'requires_capture'
    ? `This PaymentIntent (${paymentIntent.id}) has not been captured. Cancel it to release the authorization instead of refunding.`
    : `This PaymentIntent (${paymentIntent.id}) does not have a successful charge to refund.`;
}
