import { resourceMissing } from './errors.js';
import { newId, unixNow } from './ids.js';
import type { Store, StoredPaymentMethod } from './store.js';
import { testPaymentMethod } from './test-payment-methods.js';

/**
 * Resolves the `payment_method` parameter. A test token such as `pm_card_visa` creates a new
 * PaymentMethod with its own id, as Stripe does, so the platform never sees the token echoed
 * back; an id minted that way can be used again.
 */
export function resolvePaymentMethod(store: Store, reference: string): StoredPaymentMethod {
  const existing = store.paymentMethods.get(reference);
  if (existing) return existing;

  const test = testPaymentMethod(reference);
  if (!test) throw resourceMissing('PaymentMethod', reference, 'payment_method');

  const created: StoredPaymentMethod = {
    object: {
      id: newId('pm'),
      object: 'payment_method',
      type: 'card',
      card: {
        ...test.card,
        exp_month: 12,
        exp_year: new Date().getUTCFullYear() + 3,
        funding: 'credit',
        country: 'US',
      },
      created: unixNow(),
      customer: null,
      livemode: false,
      metadata: {},
    },
    behaviour: test.behaviour,
  };
  store.paymentMethods.set(created.object.id, created);
  return created;
}
