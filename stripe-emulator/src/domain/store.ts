import type { Charge, PaymentIntent, PaymentMethod, Refund, StripeEvent } from './objects.js';
import type { CardBehaviour } from './test-payment-methods.js';

/**
 * Operations the emulator actually performed. Idempotent replays, rejected requests and
 * Stripe-initiated changes (an authorization expiring) are not counted, so a test can prove
 * that a retried capture moved money once.
 */
export interface Counters {
  paymentIntentsCreated: number;
  confirmations: number;
  authorizations: number;
  declines: number;
  captures: number;
  cancellations: number;
  refunds: number;
}

export interface StoredPaymentMethod {
  object: PaymentMethod;
  behaviour: CardBehaviour;
}

function zeroCounters(): Counters {
  return {
    paymentIntentsCreated: 0,
    confirmations: 0,
    authorizations: 0,
    declines: 0,
    captures: 0,
    cancellations: 0,
    refunds: 0,
  };
}

/** All emulated Stripe state, in memory. Maps keep insertion (creation) order. */
export class Store {
  readonly paymentIntents = new Map<string, PaymentIntent>();
  readonly charges = new Map<string, Charge>();
  readonly refunds = new Map<string, Refund>();
  readonly paymentMethods = new Map<string, StoredPaymentMethod>();
  readonly events = new Map<string, StripeEvent>();
  counters: Counters = zeroCounters();

  clear(): void {
    this.paymentIntents.clear();
    this.charges.clear();
    this.refunds.clear();
    this.paymentMethods.clear();
    this.events.clear();
    this.counters = zeroCounters();
  }
}

/** A deep copy, so a returned or published object never changes after the fact. */
export function snapshot<T>(object: T): T {
  return structuredClone(object);
}
