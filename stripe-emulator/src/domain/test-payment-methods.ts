import type { CardDetails } from './objects.js';

export interface Decline {
  code: string;
  declineCode?: string;
  message: string;
}

/**
 * What confirming with a payment method does. `delayed` outcomes model card networks that
 * answer asynchronously: the PaymentIntent sits in `processing` until the emulator's
 * processing delay has passed.
 */
export type CardBehaviour =
  | { kind: 'authorize' }
  | { kind: 'decline'; decline: Decline }
  | { kind: 'delayed'; outcome: { kind: 'authorize' } | { kind: 'decline'; decline: Decline } };

export interface TestPaymentMethod {
  card: Pick<CardDetails, 'brand' | 'last4'>;
  behaviour: CardBehaviour;
}

const genericDecline: Decline = {
  code: 'card_declined',
  declineCode: 'generic_decline',
  message: 'Your card was declined.',
};

const insufficientFunds: Decline = {
  code: 'card_declined',
  declineCode: 'insufficient_funds',
  message: 'Your card has insufficient funds.',
};

const visa = { brand: 'visa', last4: '4242' };
const visaDeclined = { brand: 'visa', last4: '0002' };

/**
 * Stripe's documented test PaymentMethods the platform uses, plus two emulator-only ones
 * (`pm_card_delayed*`) for asynchronous authorization, which Stripe's test cards cannot
 * produce on demand.
 */
const TEST_PAYMENT_METHODS: Record<string, TestPaymentMethod> = {
  pm_card_visa: { card: visa, behaviour: { kind: 'authorize' } },
  pm_card_mastercard: {
    card: { brand: 'mastercard', last4: '4444' },
    behaviour: { kind: 'authorize' },
  },
  pm_card_chargeDeclined: {
    card: visaDeclined,
    behaviour: { kind: 'decline', decline: genericDecline },
  },
  pm_card_visa_chargeDeclined: {
    card: visaDeclined,
    behaviour: { kind: 'decline', decline: genericDecline },
  },
  pm_card_chargeDeclinedInsufficientFunds: {
    card: { brand: 'visa', last4: '9995' },
    behaviour: { kind: 'decline', decline: insufficientFunds },
  },
  pm_card_visa_chargeDeclinedInsufficientFunds: {
    card: { brand: 'visa', last4: '9995' },
    behaviour: { kind: 'decline', decline: insufficientFunds },
  },
  pm_card_delayed: {
    card: visa,
    behaviour: { kind: 'delayed', outcome: { kind: 'authorize' } },
  },
  pm_card_delayed_chargeDeclined: {
    card: visaDeclined,
    behaviour: { kind: 'delayed', outcome: { kind: 'decline', decline: genericDecline } },
  },
};

export function testPaymentMethod(token: string): TestPaymentMethod | undefined {
  return Object.hasOwn(TEST_PAYMENT_METHODS, token) ? TEST_PAYMENT_METHODS[token] : undefined;
}
