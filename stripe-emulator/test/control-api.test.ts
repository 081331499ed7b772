import { describe, expect, it } from 'vitest';
import type { Charge, Counters, PaymentIntent, WebhookEndpoint } from '../src/index.js';
import { authorize, startEmulator, startReceiver, stripeClient, verify } from './support.js';

async function call<T>(url: string, method: string, body?: unknown): Promise<{ status: number; body: T }> {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as T };
}

describe('control API over HTTP (/__emulator)', () => {
  it('registers an endpoint, sets faults, injects failures, reads counters and resets', async () => {
    const emulator = await startEmulator();
    const control = `${emulator.url}/__emulator`;
    const stripe = stripeClient(emulator);
    const receiver = await startReceiver();

    const registered = await call<WebhookEndpoint>(`${control}/webhook-endpoints`, 'POST', { url: receiver.url });
    expect(registered.status).toBe(201);
    expect(registered.body.secret).toMatch(/^whsec_/);

    const faults = await call(`${control}/webhook-faults`, 'PUT', { duplicates: 2 });
    expect(faults.body).toMatchObject({ duplicates: 2, delayMs: 0, reorder: null, dropFirstAttempt: false });

    const injected = await call(`${control}/failures`, 'POST', { operation: 'payment_intents.cancel', count: 1 });
    expect(injected.body).toEqual({ data: [{ operation: 'payment_intents.cancel', mode: 'error', remaining: 1 }] });

    const authorized = await authorize(stripe);
    await expect(stripe.paymentIntents.cancel(authorized.id)).rejects.toMatchObject({ statusCode: 500 });
    await stripe.paymentIntents.cancel(authorized.id);
    await emulator.control.waitForWebhooks();

    // Two events (created, amount_capturable_updated) and the cancel, each twice.
    expect(receiver.received).toHaveLength(6);
    for (const webhook of receiver.received)
      expect(() => verify(stripe, webhook, registered.body.secret)).not.toThrow();

    const counters = await call<Counters>(`${control}/counters`, 'GET');
    expect(counters.body).toMatchObject({ paymentIntentsCreated: 1, authorizations: 1, cancellations: 1 });
    const paymentIntents = await call<{ data: PaymentIntent[] }>(`${control}/payment-intents`, 'GET');
    expect(paymentIntents.body.data.map(({ id, status }) => ({ id, status }))).toEqual([
      { id: authorized.id, status: 'canceled' },
    ]);
    const deliveries = await call<{ outstanding: number; attempts: unknown[] }>(`${control}/webhook-deliveries`, 'GET');
    expect(deliveries.body).toMatchObject({ outstanding: 0 });
    expect(deliveries.body.attempts).toHaveLength(6);

    expect((await call(`${control}/reset`, 'POST')).status).toBe(200);
    expect((await call<Counters>(`${control}/counters`, 'GET')).body.paymentIntentsCreated).toBe(0);
    await expect(stripe.paymentIntents.retrieve(authorized.id)).rejects.toMatchObject({ statusCode: 404 });
    // Endpoints are configuration and survive a reset; faults do not.
    expect((await call<{ data: unknown[] }>(`${control}/webhook-endpoints`, 'GET')).body.data).toHaveLength(1);
    expect((await call(`${control}/webhook-faults`, 'GET')).body).toMatchObject({ duplicates: 1 });

    const removed = await call(`${control}/webhook-endpoints/${registered.body.id}`, 'DELETE');
    expect(removed.body).toEqual({ id: registered.body.id, deleted: true });
  });

  it('an endpoint registered with the secret a roll replaced is signed with both, so a receiver holding either verifies', async () => {
    const emulator = await startEmulator();
    const control = `${emulator.url}/__emulator`;
    const stripe = stripeClient(emulator);
    const receiver = await startReceiver();
    const [previous, current] = ['whsec_before_the_roll_0123456789', 'whsec_after_the_roll_0123456789'];
    await call(`${control}/webhook-endpoints`, 'POST', {
      url: receiver.url,
      secret: current,
      previousSecret: previous,
    });

    await authorize(stripe);
    await emulator.control.waitForWebhooks();
    expect(receiver.received.length).toBeGreaterThan(0);
    for (const webhook of receiver.received) {
      expect(String(webhook.headers['stripe-signature']).match(/v1=/g)).toHaveLength(2);
      expect(() => verify(stripe, webhook, current)).not.toThrow();
      expect(() => verify(stripe, webhook, previous)).not.toThrow();
      expect(() => verify(stripe, webhook, 'whsec_neither_of_them_0123456789')).toThrow();
    }
  });

  it('lists each charge with what was captured and refunded of its intent', async () => {
    const emulator = await startEmulator();
    const control = `${emulator.url}/__emulator`;
    const stripe = stripeClient(emulator);
    const kept = await authorize(stripe);
    await stripe.paymentIntents.capture(kept.id);
    const refunded = await authorize(stripe);
    await stripe.paymentIntents.capture(refunded.id);
    await stripe.refunds.create({ payment_intent: refunded.id });
    const uncaptured = await authorize(stripe);
    const charges = await call<{ data: Charge[] }>(`${control}/charges`, 'GET');
    const byIntent = Object.fromEntries(
      charges.body.data.map((c) => [c.payment_intent, { captured: c.amount_captured, refunded: c.amount_refunded }]),
    );
    expect(byIntent).toEqual({
      [kept.id]: { captured: kept.amount, refunded: 0 },
      [refunded.id]: { captured: refunded.amount, refunded: refunded.amount },
      [uncaptured.id]: { captured: 0, refunded: 0 },
    });
  });

  it('an outage fails every API call with 500 api_error until it ends, and nothing is done meanwhile', async () => {
    const emulator = await startEmulator();
    const control = `${emulator.url}/__emulator`;
    const stripe = stripeClient(emulator);
    const started = await call<{ until: string }>(`${control}/outage`, 'PUT', { seconds: 60 });
    expect(new Date(started.body.until).getTime()).toBeGreaterThan(Date.now() + 55_000);
    await expect(
      stripe.paymentIntents.create(
        { amount: 1000, currency: 'eur', capture_method: 'manual' },
        { idempotencyKey: 'k1' },
      ),
    ).rejects.toMatchObject({ statusCode: 500, type: 'StripeAPIError' });
    await expect(stripe.paymentIntents.list()).rejects.toMatchObject({ statusCode: 500 });
    expect((await call<{ data: unknown[] }>(`${control}/payment-intents`, 'GET')).body.data).toEqual([]);

    expect((await call(`${control}/outage`, 'PUT', { seconds: 0 })).body).toEqual({ until: null });
    // The same idempotency key after the outage creates the intent: nothing was saved under it.
    const intent = await stripe.paymentIntents.create(
      { amount: 1000, currency: 'eur', capture_method: 'manual' },
      { idempotencyKey: 'k1' },
    );
    expect(intent.status).toBe('requires_payment_method');
    expect((await call(`${control}/outage`, 'PUT', { seconds: -1 })).status).toBe(400);
  });

  it('rejects invalid control requests', async () => {
    const emulator = await startEmulator();
    const control = `${emulator.url}/__emulator`;

    expect((await call(`${control}/webhook-endpoints`, 'POST', { url: 'not a url' })).status).toBe(400);
    expect((await call(`${control}/failures`, 'POST', { operation: 'payment_intents.explode' })).status).toBe(400);
    expect((await call(`${control}/webhook-faults`, 'PUT', { duplicates: 0 })).status).toBe(400);
    expect((await call(`${control}/webhook-endpoints/we_missing`, 'DELETE')).status).toBe(404);
  });
});
