import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { DEFAULT_API_VERSION } from '../src/index.js';
import { authorize, closedPort, sleep, startEmulator, startReceiver, stripeClient, verify } from './support.js';

const SECRET = 'whsec_test_secret';

async function setup(respond?: Parameters<typeof startReceiver>[0], enabledEvents?: string[]) {
  const receiver = await startReceiver(respond);
  const emulator = await startEmulator();
  emulator.control.addWebhookEndpoint({ url: receiver.url, secret: SECRET, enabledEvents });
  return { emulator, receiver, stripe: stripeClient(emulator) };
}

describe('webhook events', () => {
  it('signs events so that stripe.webhooks.constructEvent accepts them, and only with the right secret', async () => {
    const { emulator, receiver, stripe } = await setup();
    const paymentIntent = await stripe.paymentIntents.create(
      { amount: 5_000, currency: 'usd', capture_method: 'manual' },
      { idempotencyKey: 'create-ord_1' },
    );

    const [webhook] = await receiver.waitFor(1);
    if (!webhook) throw new Error('no webhook');
    expect(webhook.headers['stripe-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(webhook.headers['content-type']).toContain('application/json');

    const event = verify(stripe, webhook, SECRET);
    expect(event).toMatchObject({
      object: 'event',
      type: 'payment_intent.created',
      api_version: DEFAULT_API_VERSION,
      livemode: false,
      pending_webhooks: 1,
      request: { idempotency_key: 'create-ord_1' },
      data: { object: { id: paymentIntent.id, object: 'payment_intent', status: 'requires_payment_method' } },
    });
    expect(event.id).toMatch(/^evt_/);
    expect(event.request?.id).toBe(paymentIntent.lastResponse.requestId);

    expect(() => verify(stripe, webhook, 'whsec_other')).toThrow(Stripe.errors.StripeSignatureVerificationError);
    expect(() =>
      stripe.webhooks.constructEvent(
        webhook.body.replace('5000', '5001'),
        String(webhook.headers['stripe-signature']),
        SECRET,
      ),
    ).toThrow(Stripe.errors.StripeSignatureVerificationError);
    await emulator.control.waitForWebhooks();
  });

  it('emits the lifecycle events of an authorization and capture, each with the object as it was then', async () => {
    const { emulator, receiver, stripe } = await setup();
    const authorized = await authorize(stripe);
    await emulator.control.waitForWebhooks();
    await stripe.paymentIntents.capture(authorized.id);
    await emulator.control.waitForWebhooks();

    const events = receiver.received.map((webhook) => verify(stripe, webhook, SECRET));
    const byType = new Map(events.map((event) => [event.type, event.data.object as Stripe.PaymentIntent]));
    expect([...byType.keys()].sort()).toEqual([
      'payment_intent.amount_capturable_updated',
      'payment_intent.created',
      'payment_intent.succeeded',
    ]);
    expect(byType.get('payment_intent.created')?.status).toBe('requires_confirmation');
    expect(byType.get('payment_intent.amount_capturable_updated')).toMatchObject({
      status: 'requires_capture',
      amount_capturable: 5_000,
    });
    expect(byType.get('payment_intent.succeeded')).toMatchObject({ status: 'succeeded', amount_received: 5_000 });

    // The events API holds the same events.
    const listed = await stripe.events.list({ type: 'payment_intent.*' });
    expect(listed.data.map((event) => event.id).sort()).toEqual(events.map((event) => event.id).sort());
  });

  it('emits processing, then amount_capturable_updated without a request, for a delayed card', async () => {
    const { emulator, receiver, stripe } = await setup();
    await authorize(stripe, { payment_method: 'pm_card_delayed' });
    await receiver.waitFor(3);
    await emulator.control.waitForWebhooks();

    const events = receiver.received.map((webhook) => verify(stripe, webhook, SECRET));
    const later = events.find((event) => event.type === 'payment_intent.amount_capturable_updated');
    expect(events.map((event) => event.type)).toContain('payment_intent.processing');
    expect(later?.request).toEqual({ id: null, idempotency_key: null });
  });

  it('emits payment_failed and canceled', async () => {
    const { emulator, receiver, stripe } = await setup(undefined, [
      'payment_intent.payment_failed',
      'payment_intent.canceled',
    ]);
    const failed = await authorize(stripe, { payment_method: 'pm_card_chargeDeclined' }).catch(
      (error: Stripe.errors.StripeCardError) => error.payment_intent,
    );
    await stripe.paymentIntents.cancel(String(failed?.id), { cancellation_reason: 'abandoned' });
    await emulator.control.waitForWebhooks();

    const events = receiver.received.map((webhook) => verify(stripe, webhook, SECRET));
    expect(events.map((event) => event.type).sort()).toEqual([
      'payment_intent.canceled',
      'payment_intent.payment_failed',
    ]);
    const failure = events.find((event) => event.type === 'payment_intent.payment_failed');
    expect(failure?.data.object).toMatchObject({ last_payment_error: { decline_code: 'generic_decline' } });
  });

  it('emits refund.created and charge.refunded for a refund, and refund.updated for an update', async () => {
    const { emulator, receiver, stripe } = await setup(undefined, [
      'refund.created',
      'refund.updated',
      'charge.refunded',
    ]);
    const authorized = await authorize(stripe);
    await stripe.paymentIntents.capture(authorized.id);
    const refund = await stripe.refunds.create({ payment_intent: authorized.id, amount: 1_000 });
    await stripe.refunds.update(refund.id, { metadata: { reason: 'duplicate-seat' } });
    await emulator.control.waitForWebhooks();

    const events = receiver.received.map((webhook) => verify(stripe, webhook, SECRET));
    expect(events.map((event) => event.type).sort()).toEqual(['charge.refunded', 'refund.created', 'refund.updated']);
    expect(events.find((event) => event.type === 'charge.refunded')?.data.object).toMatchObject({
      object: 'charge',
      amount_refunded: 1_000,
      payment_intent: authorized.id,
    });
  });

  it('delivers asynchronously: a slow endpoint does not slow the API request', async () => {
    const { emulator, receiver, stripe } = await setup(() => ({ status: 200, delayMs: 800 }));

    const started = Date.now();
    await authorize(stripe);
    expect(Date.now() - started).toBeLessThan(400);
    await emulator.control.waitForWebhooks();
    expect(receiver.received).toHaveLength(2);
  });
});

describe('webhook retries', () => {
  it('retries an endpoint answering non-2xx until it answers 2xx', async () => {
    const { emulator, receiver, stripe } = await setup((n) => (n <= 3 ? 500 : 200));
    await stripe.paymentIntents.create({ amount: 5_000, currency: 'usd' });
    await emulator.control.waitForWebhooks();

    expect(receiver.received).toHaveLength(4);
    const ids = receiver.received.map((webhook) => verify(stripe, webhook, SECRET).id);
    expect(new Set(ids).size).toBe(1);
    expect(
      emulator.control.webhookAttempts().map(({ attempt, outcome, status }) => ({ attempt, outcome, status })),
    ).toEqual([
      { attempt: 1, outcome: 'failed', status: 500 },
      { attempt: 2, outcome: 'failed', status: 500 },
      { attempt: 3, outcome: 'failed', status: 500 },
      { attempt: 4, outcome: 'delivered', status: 200 },
    ]);
    // Backoff: 20, 40 and 80 ms (capped at 100) between the attempts.
    const gaps = receiver.received.slice(1).map((webhook, i) => webhook.at - (receiver.received[i]?.at ?? 0));
    expect(gaps[0]).toBeGreaterThanOrEqual(15);
    expect(gaps[2]).toBeGreaterThanOrEqual(70);
  });

  it('retries connection errors, and gives up after the maximum number of attempts', async () => {
    const emulator = await startEmulator();
    emulator.control.addWebhookEndpoint({ url: `http://127.0.0.1:${await closedPort()}/webhooks`, secret: SECRET });
    await stripeClient(emulator).paymentIntents.create({ amount: 5_000, currency: 'usd' });
    await emulator.control.waitForWebhooks();

    const attempts = emulator.control.webhookAttempts();
    expect(attempts).toHaveLength(5);
    expect(attempts.every((attempt) => attempt.outcome === 'failed' && attempt.status === null)).toBe(true);
    expect(emulator.control.outstandingWebhooks()).toBe(0);
  });
});

describe('webhook fault modes', () => {
  it('delivers each event N times with duplicates: N', async () => {
    const { emulator, receiver, stripe } = await setup();
    emulator.control.setWebhookFaults({ duplicates: 3 });
    await stripe.paymentIntents.create({ amount: 5_000, currency: 'usd' });
    await emulator.control.waitForWebhooks();

    const events = receiver.received.map((webhook) => verify(stripe, webhook, SECRET));
    expect(events).toHaveLength(3);
    expect(new Set(events.map((event) => event.id)).size).toBe(1);
  });

  it('delays delivery by delayMs', async () => {
    const { emulator, receiver, stripe } = await setup();
    emulator.control.setWebhookFaults({ delayMs: 300 });
    const started = Date.now();
    await stripe.paymentIntents.create({ amount: 5_000, currency: 'usd' });

    await sleep(150);
    expect(receiver.received).toHaveLength(0);
    const [webhook] = await receiver.waitFor(1);
    expect((webhook?.at ?? 0) - started).toBeGreaterThanOrEqual(290);
    await emulator.control.waitForWebhooks();
  });

  it('reorders a batch of events (reverse)', async () => {
    const { emulator, receiver, stripe } = await setup();
    emulator.control.setWebhookFaults({ reorder: { batchSize: 3, order: 'reverse', windowMs: 1_000 } });
    const authorized = await authorize(stripe);
    await stripe.paymentIntents.capture(authorized.id);
    await emulator.control.waitForWebhooks();

    expect(receiver.received.map((webhook) => verify(stripe, webhook, SECRET).type)).toEqual([
      'payment_intent.succeeded',
      'payment_intent.amount_capturable_updated',
      'payment_intent.created',
    ]);
  });

  it('releases a partial batch when the reorder window closes', async () => {
    const { emulator, receiver, stripe } = await setup();
    emulator.control.setWebhookFaults({ reorder: { batchSize: 10, order: 'reverse', windowMs: 100 } });
    await authorize(stripe);
    await emulator.control.waitForWebhooks();

    expect(receiver.received.map((webhook) => verify(stripe, webhook, SECRET).type)).toEqual([
      'payment_intent.amount_capturable_updated',
      'payment_intent.created',
    ]);
  });

  it('drops the first attempt of each delivery, so the retry delivers it', async () => {
    const { emulator, receiver, stripe } = await setup();
    emulator.control.setWebhookFaults({ dropFirstAttempt: true });
    await stripe.paymentIntents.create({ amount: 5_000, currency: 'usd' });
    await emulator.control.waitForWebhooks();

    expect(receiver.received).toHaveLength(1);
    expect(emulator.control.webhookAttempts().map(({ attempt, outcome }) => ({ attempt, outcome }))).toEqual([
      { attempt: 1, outcome: 'dropped' },
      { attempt: 2, outcome: 'delivered' },
    ]);
  });
});
