import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { authorize, eventually, startEmulator, stripeClient } from './support.js';

describe('PaymentIntents with manual capture', () => {
  it('authorizes a good card, then captures it', async () => {
    const stripe = stripeClient(await startEmulator());

    const authorized = await authorize(stripe, { metadata: { orderId: 'ord_1' } });
    expect(authorized).toMatchObject({
      object: 'payment_intent',
      status: 'requires_capture',
      amount: 5_000,
      amount_capturable: 5_000,
      amount_received: 0,
      currency: 'usd',
      capture_method: 'manual',
      livemode: false,
      metadata: { orderId: 'ord_1' },
      last_payment_error: null,
    });
    expect(authorized.id).toMatch(/^pi_\w{24}$/);
    expect(authorized.client_secret).toMatch(new RegExp(`^${authorized.id}_secret_\\w+$`));
    expect(authorized.latest_charge).toMatch(/^ch_/);
    // A test token is turned into a PaymentMethod of its own, as Stripe does.
    expect(authorized.payment_method).toMatch(/^pm_\w{24}$/);

    const captured = await stripe.paymentIntents.capture(authorized.id, {}, { idempotencyKey: 'capture-ord_1' });
    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 5_000, amount_capturable: 0 });

    const charge = await stripe.charges.retrieve(String(captured.latest_charge));
    expect(charge).toMatchObject({ captured: true, amount_captured: 5_000, paid: true, payment_intent: captured.id });
  });

  it('walks requires_payment_method → requires_confirmation → requires_capture when confirmed later', async () => {
    const stripe = stripeClient(await startEmulator());

    const created = await stripe.paymentIntents.create({ amount: 2_500, currency: 'eur', capture_method: 'manual' });
    expect(created.status).toBe('requires_payment_method');

    const updated = await stripe.paymentIntents.update(created.id, { payment_method: 'pm_card_visa' });
    expect(updated.status).toBe('requires_confirmation');

    const confirmed = await stripe.paymentIntents.confirm(created.id);
    expect(confirmed).toMatchObject({ status: 'requires_capture', amount_capturable: 2_500 });
  });

  it('captures part of an authorization, and refuses more than is capturable', async () => {
    const stripe = stripeClient(await startEmulator());
    const authorized = await authorize(stripe);

    await expect(stripe.paymentIntents.capture(authorized.id, { amount_to_capture: 6_000 })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'amount_too_large',
      param: 'amount_to_capture',
    });
    const captured = await stripe.paymentIntents.capture(authorized.id, { amount_to_capture: 3_000 });
    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 3_000, amount_capturable: 0 });
  });

  it('captures immediately when capture_method is automatic', async () => {
    const stripe = stripeClient(await startEmulator());
    const paid = await authorize(stripe, { capture_method: 'automatic' });
    expect(paid).toMatchObject({ status: 'succeeded', amount_received: 5_000, amount_capturable: 0 });
  });

  it('declines a declining card with a StripeCardError and leaves the PaymentIntent requiring a payment method', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const created = await stripe.paymentIntents.create({ amount: 5_000, currency: 'usd', capture_method: 'manual' });

    const failure = await stripe.paymentIntents
      .confirm(created.id, { payment_method: 'pm_card_visa_chargeDeclined' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(failure).toMatchObject({
      statusCode: 402,
      code: 'card_declined',
      decline_code: 'generic_decline',
      message: 'Your card was declined.',
      payment_intent: { id: created.id, status: 'requires_payment_method' },
    });

    const after = await stripe.paymentIntents.retrieve(created.id);
    expect(after).toMatchObject({
      status: 'requires_payment_method',
      payment_method: null,
      amount_capturable: 0,
      last_payment_error: { type: 'card_error', code: 'card_declined', decline_code: 'generic_decline' },
    });

    // The buyer can try again with another card.
    const retried = await stripe.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' });
    expect(retried).toMatchObject({ status: 'requires_capture', last_payment_error: null });
    expect(emulator.control.counters()).toMatchObject({ declines: 1, authorizations: 1, confirmations: 2 });
  });

  it('declines on create with confirm=true, and still creates the PaymentIntent', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);

    await expect(authorize(stripe, { payment_method: 'pm_card_chargeDeclined' })).rejects.toBeInstanceOf(
      Stripe.errors.StripeCardError,
    );
    const [paymentIntent] = emulator.control.paymentIntents();
    expect(paymentIntent?.status).toBe('requires_payment_method');
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
  });

  it('keeps a delayed card in processing, then authorizes it after the processing delay', async () => {
    const stripe = stripeClient(await startEmulator({ processingDelayMs: 150 }));

    const processing = await authorize(stripe, { payment_method: 'pm_card_delayed' });
    expect(processing).toMatchObject({ status: 'processing', amount_capturable: 0 });
    await expect(stripe.paymentIntents.capture(processing.id)).rejects.toMatchObject({
      code: 'payment_intent_unexpected_state',
    });
    await expect(stripe.paymentIntents.cancel(processing.id)).rejects.toMatchObject({
      code: 'payment_intent_unexpected_state',
    });

    const authorized = await eventually(async () => {
      const paymentIntent = await stripe.paymentIntents.retrieve(processing.id);
      expect(paymentIntent.status).toBe('requires_capture');
      return paymentIntent;
    });
    expect(authorized.amount_capturable).toBe(5_000);
  });

  it('fails a delayed declining card after processing, without an API error', async () => {
    const stripe = stripeClient(await startEmulator({ processingDelayMs: 50 }));

    const processing = await authorize(stripe, { payment_method: 'pm_card_delayed_chargeDeclined' });
    expect(processing.status).toBe('processing');

    await eventually(async () => {
      const paymentIntent = await stripe.paymentIntents.retrieve(processing.id);
      expect(paymentIntent).toMatchObject({
        status: 'requires_payment_method',
        last_payment_error: { decline_code: 'generic_decline' },
      });
    });
  });

  it('cancels an authorization, after which capture is an invalid request', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const authorized = await authorize(stripe);

    const canceled = await stripe.paymentIntents.cancel(authorized.id, { cancellation_reason: 'abandoned' });
    expect(canceled).toMatchObject({ status: 'canceled', cancellation_reason: 'abandoned', amount_capturable: 0 });
    expect(canceled.canceled_at).toEqual(expect.any(Number));

    const failure = await stripe.paymentIntents.capture(authorized.id).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
    expect(failure).toMatchObject({
      statusCode: 400,
      code: 'payment_intent_unexpected_state',
      payment_intent: { id: authorized.id, status: 'canceled' },
    });

    // The released authorization shows on the charge.
    const charge = await stripe.charges.retrieve(String(authorized.latest_charge));
    expect(charge).toMatchObject({ captured: false, refunded: true, amount_refunded: 5_000 });
    expect(emulator.control.counters()).toMatchObject({ cancellations: 1, captures: 0 });
  });

  it('refuses to cancel a succeeded PaymentIntent or to capture it twice', async () => {
    const stripe = stripeClient(await startEmulator());
    const authorized = await authorize(stripe);
    await stripe.paymentIntents.capture(authorized.id);

    await expect(stripe.paymentIntents.cancel(authorized.id)).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'payment_intent_unexpected_state',
    });
    await expect(stripe.paymentIntents.capture(authorized.id)).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'payment_intent_unexpected_state',
    });
  });

  it('cancels an uncaptured authorization automatically when it expires', async () => {
    const stripe = stripeClient(await startEmulator({ authorizationTtlMs: 100 }));
    const authorized = await authorize(stripe);

    await eventually(async () => {
      const paymentIntent = await stripe.paymentIntents.retrieve(authorized.id);
      expect(paymentIntent).toMatchObject({ status: 'canceled', cancellation_reason: 'automatic' });
    });
    await expect(stripe.paymentIntents.capture(authorized.id)).rejects.toMatchObject({
      code: 'payment_intent_unexpected_state',
    });
  });

  it('merges metadata updates and unsets keys set to the empty string', async () => {
    const stripe = stripeClient(await startEmulator());
    const authorized = await authorize(stripe, { metadata: { orderId: 'ord_1', cell: 'cell-1' } });

    const updated = await stripe.paymentIntents.update(authorized.id, { metadata: { cell: '', holdId: 'h_1' } });
    expect(updated.metadata).toEqual({ orderId: 'ord_1', holdId: 'h_1' });
    await expect(stripe.paymentIntents.update(authorized.id, { amount: 100 })).rejects.toMatchObject({
      code: 'payment_intent_unexpected_state',
    });
  });

  it('expands latest_charge on request', async () => {
    const stripe = stripeClient(await startEmulator());
    const authorized = await authorize(stripe, { expand: ['latest_charge'] });
    expect(authorized.latest_charge).toMatchObject({ object: 'charge', captured: false, amount: 5_000 });
  });
});

describe('request validation and authentication', () => {
  it('rejects bad parameters as Stripe does', async () => {
    const stripe = stripeClient(await startEmulator());

    await expect(
      stripe.paymentIntents.create({ currency: 'usd' } as Stripe.PaymentIntentCreateParams),
    ).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'parameter_missing',
      param: 'amount',
    });
    await expect(
      stripe.paymentIntents.create({ amount: 100, currency: 'usd', colour: 'red' } as Stripe.PaymentIntentCreateParams),
    ).rejects.toMatchObject({ code: 'parameter_unknown', param: 'colour' });
    await expect(stripe.paymentIntents.create({ amount: 10, currency: 'usd' })).rejects.toMatchObject({
      code: 'amount_too_small',
    });
    await expect(stripe.paymentIntents.confirm('pi_missing', { payment_method: 'pm_card_visa' })).rejects.toMatchObject(
      {
        type: 'StripeInvalidRequestError',
        statusCode: 404,
        code: 'resource_missing',
        param: 'intent',
      },
    );
    await expect(authorize(stripe, { payment_method: 'pm_unknown' })).rejects.toMatchObject({
      statusCode: 404,
      code: 'resource_missing',
      param: 'payment_method',
    });
  });

  it('answers 401 without an API key, and refuses live keys', async () => {
    const emulator = await startEmulator();

    const response = await fetch(`${emulator.url}/v1/payment_intents`);
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { type: string; message: string } };
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain('You did not provide an API key');

    const live = stripeClient(emulator, { apiKey: 'sk_live_0123456789abcdef' });
    await expect(live.paymentIntents.list()).rejects.toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
  });
});

describe('listing and searching', () => {
  it('lists newest first with cursor pagination', async () => {
    const stripe = stripeClient(await startEmulator());
    const ids: string[] = [];
    for (let i = 0; i < 5; i += 1)
      ids.push((await stripe.paymentIntents.create({ amount: 100 + i, currency: 'usd' })).id);

    const first = await stripe.paymentIntents.list({ limit: 2 });
    expect(first.data.map((paymentIntent) => paymentIntent.id)).toEqual([ids[4], ids[3]]);
    expect(first.has_more).toBe(true);

    const all = await stripe.paymentIntents.list({ limit: 2 }).autoPagingToArray({ limit: 10 });
    expect(all.map((paymentIntent) => paymentIntent.id)).toEqual([...ids].reverse());
  });

  it("finds PaymentIntents by metadata with metadata['orderId']:'X'", async () => {
    const stripe = stripeClient(await startEmulator());
    const wanted = await authorize(stripe, { metadata: { orderId: 'ord_A' } });
    await authorize(stripe, { metadata: { orderId: 'ord_B' } });
    await stripe.paymentIntents.create({ amount: 700, currency: 'usd', metadata: { orderId: 'ord_A' } });

    const byOrder = await stripe.paymentIntents.search({ query: "metadata['orderId']:'ord_A'" });
    expect(byOrder.object).toBe('search_result');
    expect(byOrder.data).toHaveLength(2);

    const authorizedForOrder = await stripe.paymentIntents.search({
      query: "metadata['orderId']:'ord_A' AND status:'requires_capture'",
    });
    expect(authorizedForOrder.data.map((paymentIntent) => paymentIntent.id)).toEqual([wanted.id]);

    const either = await stripe.paymentIntents.search({ query: 'amount:700 OR amount:5000', limit: 2 });
    expect(either.has_more).toBe(true);
    const rest = await stripe.paymentIntents.search({
      query: 'amount:700 OR amount:5000',
      limit: 2,
      page: String(either.next_page),
    });
    expect([...either.data, ...rest.data]).toHaveLength(3);

    await expect(stripe.paymentIntents.search({ query: "colour:'red'" })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      param: 'query',
    });
  });
});
