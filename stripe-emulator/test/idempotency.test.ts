import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { authorize, startEmulator, stripeClient } from './support.js';

const order = { amount: 5_000, currency: 'usd', capture_method: 'manual', metadata: { orderId: 'ord_1' } } as const;

describe('Idempotency-Key', () => {
  it('replays the first response for the same key and parameters, without a second PaymentIntent', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);

    const first = await stripe.paymentIntents.create(order, { idempotencyKey: 'order-ord_1-pi' });
    const replay = await stripe.paymentIntents.create(order, { idempotencyKey: 'order-ord_1-pi' });

    const { lastResponse: firstResponse, ...firstBody } = first;
    const { lastResponse: replayResponse, ...replayBody } = replay;
    expect(replayBody).toEqual(firstBody);
    expect(replayResponse.headers['idempotent-replayed']).toBe('true');
    expect(replayResponse.headers['original-request']).toBe(firstResponse.requestId);
    expect(firstResponse.headers['idempotent-replayed']).toBeUndefined();
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
    expect(emulator.control.paymentIntents()).toHaveLength(1);
  });

  it('treats calls without a key as distinct (the SDK sends a fresh automatic key each time)', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);

    await stripe.paymentIntents.create(order);
    await stripe.paymentIntents.create(order);
    expect(emulator.control.counters().paymentIntentsCreated).toBe(2);
  });

  it('refuses the same key with other parameters with a StripeIdempotencyError', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    await stripe.paymentIntents.create(order, { idempotencyKey: 'reused' });

    const failure = await stripe.paymentIntents
      .create({ ...order, amount: 6_000 }, { idempotencyKey: 'reused' })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(failure).toMatchObject({
      statusCode: 400,
      rawType: 'idempotency_error',
      message: expect.stringContaining(
        'Keys for idempotent requests can only be used with the same parameters they were first used with.',
      ),
    });

    // Another endpoint is another request too.
    const created = emulator.control.paymentIntents()[0];
    await expect(
      stripe.paymentIntents.cancel(String(created?.id), {}, { idempotencyKey: 'reused' }),
    ).rejects.toBeInstanceOf(Stripe.errors.StripeIdempotencyError);
    expect(emulator.control.counters()).toMatchObject({ paymentIntentsCreated: 1, cancellations: 0 });
  });

  it('scopes keys to the API key', async () => {
    const emulator = await startEmulator();
    const first = await stripeClient(emulator, { apiKey: 'sk_test_cell_1' }).paymentIntents.create(order, {
      idempotencyKey: 'shared',
    });
    const second = await stripeClient(emulator, { apiKey: 'sk_test_cell_2' }).paymentIntents.create(order, {
      idempotencyKey: 'shared',
    });
    expect(second.id).not.toBe(first.id);
    expect(emulator.control.counters().paymentIntentsCreated).toBe(2);
  });

  it('replays a capture: a retried capture moves money once', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const authorized = await authorize(stripe);

    const first = await stripe.paymentIntents.capture(authorized.id, {}, { idempotencyKey: 'capture-ord_1' });
    const retry = await stripe.paymentIntents.capture(authorized.id, {}, { idempotencyKey: 'capture-ord_1' });
    expect(retry.status).toBe('succeeded');
    expect(retry.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(first.id).toBe(retry.id);
    expect(emulator.control.counters().captures).toBe(1);

    // Without the key, the second capture is a new request and fails on the PaymentIntent's state.
    await expect(stripe.paymentIntents.capture(authorized.id)).rejects.toMatchObject({
      code: 'payment_intent_unexpected_state',
    });
  });

  it('replays errors from an executed request (a decline) too', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const declined = { ...order, payment_method: 'pm_card_chargeDeclined', confirm: true };

    const first = await stripe.paymentIntents.create(declined, { idempotencyKey: 'declined' }).catch((e: unknown) => e);
    const replay = await stripe.paymentIntents
      .create(declined, { idempotencyKey: 'declined' })
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect(replay).toBeInstanceOf(Stripe.errors.StripeCardError);
    expect((replay as Stripe.errors.StripeCardError).headers?.['idempotent-replayed']).toBe('true');
    expect(emulator.control.counters()).toMatchObject({ paymentIntentsCreated: 1, declines: 1 });
  });

  it('saves nothing for a request that failed validation, so the key can still be used', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);

    await expect(
      stripe.paymentIntents.create({ ...order, capture_method: 'later' as 'manual' }, { idempotencyKey: 'k' }),
    ).rejects.toMatchObject({ statusCode: 400, param: 'capture_method' });
    const created = await stripe.paymentIntents.create(order, { idempotencyKey: 'k' });
    expect(created.status).toBe('requires_payment_method');
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
  });

  it('answers 409 idempotency_key_in_use while the first request with the key is still executing', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    emulator.control.setLatency('payment_intents.create', 300);

    const [first, second] = await Promise.allSettled([
      stripe.paymentIntents.create(order, { idempotencyKey: 'double-click' }),
      new Promise((resolve) => setTimeout(resolve, 50)).then(() =>
        stripe.paymentIntents.create(order, { idempotencyKey: 'double-click' }),
      ),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second.status).toBe('rejected');
    const conflict = (second as PromiseRejectedResult).reason as Stripe.errors.StripeError;
    expect(conflict.statusCode).toBe(409);
    expect(conflict.rawType).toBe('idempotency_error');
    expect(conflict.code).toBe('idempotency_key_in_use');

    // Once the first has finished, the same request replays it.
    const replay = await stripe.paymentIntents.create(order, { idempotencyKey: 'double-click' });
    expect(replay.id).toBe((first as PromiseFulfilledResult<Stripe.PaymentIntent>).value.id);
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
  });

  it('lets the SDK retry through a 409 to the replayed result', async () => {
    const emulator = await startEmulator();
    emulator.control.setLatency('payment_intents.create', 200);
    const stripe = stripeClient(emulator, { maxNetworkRetries: 3 });

    const [first, second] = await Promise.all([
      stripe.paymentIntents.create(order, { idempotencyKey: 'retry-409' }),
      stripe.paymentIntents.create(order, { idempotencyKey: 'retry-409' }),
    ]);
    expect(second.id).toBe(first.id);
    expect(emulator.control.counters().paymentIntentsCreated).toBe(1);
  });
});

describe('injected API failures', () => {
  it('fails the next N calls with 500 api_error before executing, so a retry with the key succeeds once', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const authorized = await authorize(stripe);
    emulator.control.injectFailures('payment_intents.capture', 2);

    for (let attempt = 0; attempt < 2; attempt += 1) {
      const failure = await stripe.paymentIntents
        .capture(authorized.id, {}, { idempotencyKey: 'capture-ord_1' })
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(Stripe.errors.StripeAPIError);
      expect(failure).toMatchObject({ statusCode: 500, rawType: 'api_error' });
    }
    expect((await stripe.paymentIntents.retrieve(authorized.id)).status).toBe('requires_capture');

    const captured = await stripe.paymentIntents.capture(authorized.id, {}, { idempotencyKey: 'capture-ord_1' });
    expect(captured.status).toBe('succeeded');
    expect(emulator.control.counters().captures).toBe(1);
    expect(emulator.control.pendingFailures()).toEqual([]);
  });

  it('can lose the response after the operation ran; the retry with the same key gets the saved result', async () => {
    const emulator = await startEmulator();
    const stripe = stripeClient(emulator);
    const authorized = await authorize(stripe);
    emulator.control.injectFailures('payment_intents.capture', 1, 'lost_response');

    // stripe-node retries a closed connection once even with maxNetworkRetries: 0, reusing its key.
    const captured = await stripe.paymentIntents.capture(authorized.id);
    expect(captured.status).toBe('succeeded');
    expect(captured.lastResponse.headers['idempotent-replayed']).toBe('true');
    expect(emulator.control.counters().captures).toBe(1);
  });
});
