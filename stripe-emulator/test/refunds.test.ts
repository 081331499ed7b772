import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { authorize, startEmulator, stripeClient } from './support.js';

async function captured(stripe: Stripe) {
  const authorized = await authorize(stripe);
  return stripe.paymentIntents.capture(authorized.id);
}

describe('Refunds', () => {
  it('refunds a captured PaymentIntent in full by default, and records it on the charge', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const paid = await captured(stripe);

    const refund = await stripe.refunds.create(
      { payment_intent: paid.id, reason: 'requested_by_customer', metadata: { orderId: 'ord_1' } },
      { idempotencyKey: 'refund-ord_1' },
    );
    expect(refund).toMatchObject({
      object: 'refund',
      amount: 5_000,
      status: 'succeeded',
      payment_intent: paid.id,
      charge: paid.latest_charge,
      reason: 'requested_by_customer',
      metadata: { orderId: 'ord_1' },
    });
    expect(refund.id).toMatch(/^re_/);
    expect(await stripe.refunds.retrieve(refund.id)).toMatchObject({ id: refund.id, amount: 5_000 });

    const charge = await stripe.charges.retrieve(String(paid.latest_charge));
    expect(charge).toMatchObject({ amount_refunded: 5_000, refunded: true });

    // A retried refund with the same key refunds once.
    await stripe.refunds.create(
      { payment_intent: paid.id, reason: 'requested_by_customer', metadata: { orderId: 'ord_1' } },
      { idempotencyKey: 'refund-ord_1' },
    );
    expect(emulator.control.counters().refunds).toBe(1);
  });

  it('refunds in parts, and refuses to refund more than remains', async () => {
    const stripe = stripeClient(await startEmulator());
    const paid = await captured(stripe);

    await stripe.refunds.create({ payment_intent: paid.id, amount: 2_000 });
    await expect(stripe.refunds.create({ payment_intent: paid.id, amount: 3_500 })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'amount_too_large',
    });
    await stripe.refunds.create({ payment_intent: paid.id });
    await expect(stripe.refunds.create({ payment_intent: paid.id })).rejects.toMatchObject({
      code: 'charge_already_refunded',
    });

    const refunds = await stripe.refunds.list({ payment_intent: paid.id });
    expect(refunds.data.map((refund) => refund.amount)).toEqual([3_000, 2_000]);
    expect((await stripe.charges.retrieve(String(paid.latest_charge))).refunded).toBe(true);
  });

  it('refuses to refund a PaymentIntent that has not been captured', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const authorized = await authorize(stripe);

    const failure = await stripe.refunds.create({ payment_intent: authorized.id }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(failure).toMatchObject({ code: 'payment_intent_unexpected_state' });
    await expect(stripe.refunds.create({ payment_intent: 'pi_missing' })).rejects.toMatchObject({
      statusCode: 404,
      code: 'resource_missing',
    });
    expect(emulator.control.counters().refunds).toBe(0);
  });
});
