import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { optionsFromEnv } from '../src/config.js';
import { authorize, startEmulator, startReceiver, stripeClient, verify } from './support.js';

const PUBLISHABLE_KEY = 'pk_test_emulator';

/** Stripe.js's confirm: the publishable key, and the client secret in the form body. */
function confirmAsBrowser(browser: Stripe, id: string, params: { client_secret?: string; payment_method?: string }) {
  // The server SDK's types leave client_secret out of confirm; Stripe.js sends it as a body parameter.
  return browser.paymentIntents.confirm(id, params as Stripe.PaymentIntentConfirmParams);
}

async function manualIntent(server: Stripe) {
  return server.paymentIntents.create({
    amount: 9_500,
    currency: 'eur',
    capture_method: 'manual',
    metadata: { orderId: 'ord_pk' },
  });
}

describe('a publishable key with the client secret (the way Stripe.js confirms)', () => {
  it('confirms a PaymentIntent with its client secret; the server then captures with the secret key', async () => {
    const receiver = await startReceiver();
    const emulator = await startEmulator({ webhookEndpoints: [{ url: receiver.url, secret: 'whsec_pk' }] });
    const server = stripeClient(emulator);
    const browser = stripeClient(emulator, { apiKey: PUBLISHABLE_KEY });
    const created = await manualIntent(server);

    const confirmed = await confirmAsBrowser(browser, created.id, {
      client_secret: created.client_secret!,
      payment_method: 'pm_card_visa',
    });
    expect(confirmed).toMatchObject({
      id: created.id,
      status: 'requires_capture',
      client_secret: created.client_secret,
    });

    // The platform's webhook still learns of the authorization, as it would from Stripe.
    const webhooks = await receiver.waitFor(2);
    const types = webhooks.map((w) => verify(server, w, 'whsec_pk').type);
    expect(types).toContain('payment_intent.amount_capturable_updated');

    const captured = await server.paymentIntents.capture(created.id);
    expect(captured).toMatchObject({ status: 'succeeded', amount_received: 9_500, metadata: { orderId: 'ord_pk' } });
  });

  it('answers a browser on another origin (CORS), preflight included, as Stripe does for Stripe.js', async () => {
    const emulator = await startEmulator();
    const created = await manualIntent(stripeClient(emulator));
    const path = `/v1/payment_intents/${created.id}/confirm`;
    const preflight = await fetch(`${emulator.url}${path}`, {
      method: 'OPTIONS',
      headers: {
        origin: 'http://127.0.0.1:4000',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    const confirmed = await fetch(`${emulator.url}${path}`, {
      method: 'POST',
      headers: {
        origin: 'http://127.0.0.1:4000',
        authorization: `Bearer ${PUBLISHABLE_KEY}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ client_secret: created.client_secret!, payment_method: 'pm_card_visa' }),
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.headers.get('access-control-allow-origin')).toBe('*');
    expect(await confirmed.json()).toMatchObject({ status: 'requires_capture' });
  });

  it('retrieves with the client secret in the query, seeing only the fields Stripe shows a publishable key', async () => {
    const emulator = await startEmulator();
    const server = stripeClient(emulator);
    const browser = stripeClient(emulator, { apiKey: PUBLISHABLE_KEY });
    const authorized = await authorize(server, { metadata: { orderId: 'ord_pk' } });

    const seen = await browser.paymentIntents.retrieve(authorized.id, { client_secret: authorized.client_secret! });
    expect(seen).toMatchObject({
      id: authorized.id,
      object: 'payment_intent',
      amount: 5_000,
      currency: 'usd',
      status: 'requires_capture',
      capture_method: 'manual',
      client_secret: authorized.client_secret,
      payment_method: authorized.payment_method,
      livemode: false,
    });
    for (const secretOnly of ['metadata', 'latest_charge', 'amount_capturable', 'amount_received', 'customer']) {
      expect(seen).not.toHaveProperty(secretOnly);
    }
    // The confirm response is the same subset.
    const other = await manualIntent(server);
    const confirmed = await confirmAsBrowser(browser, other.id, {
      client_secret: other.client_secret!,
      payment_method: 'pm_card_visa',
    });
    expect(confirmed).not.toHaveProperty('metadata');
    expect(confirmed).not.toHaveProperty('latest_charge');
  });

  it("refuses a wrong client secret, another intent's client secret, or none, and confirms nothing", async () => {
    const emulator = await startEmulator();
    const server = stripeClient(emulator);
    const browser = stripeClient(emulator, { apiKey: PUBLISHABLE_KEY });
    const mine = await manualIntent(server);
    const theirs = await manualIntent(server);

    for (const client_secret of [`${mine.id}_secret_guessed`, theirs.client_secret!]) {
      const failure = await confirmAsBrowser(browser, mine.id, { client_secret, payment_method: 'pm_card_visa' }).catch(
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(Stripe.errors.StripeInvalidRequestError);
      expect(failure).toMatchObject({
        statusCode: 400,
        code: 'payment_intent_invalid_parameter',
        param: 'client_secret',
        message: 'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
      });
      await expect(browser.paymentIntents.retrieve(mine.id, { client_secret })).rejects.toMatchObject({
        statusCode: 400,
        code: 'payment_intent_invalid_parameter',
      });
    }
    await expect(confirmAsBrowser(browser, mine.id, { payment_method: 'pm_card_visa' })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      code: 'parameter_missing',
      param: 'client_secret',
    });
    await expect(browser.paymentIntents.retrieve(mine.id)).rejects.toMatchObject({
      statusCode: 400,
      code: 'parameter_missing',
      param: 'client_secret',
    });
    // An unknown intent is missing, whatever the secret.
    await expect(
      confirmAsBrowser(browser, 'pi_doesnotexist', {
        client_secret: mine.client_secret!,
        payment_method: 'pm_card_visa',
      }),
    ).rejects.toMatchObject({ statusCode: 404, code: 'resource_missing' });

    expect((await server.paymentIntents.retrieve(mine.id)).status).toBe('requires_payment_method');
    expect(emulator.control.counters().confirmations).toBe(0);
  });

  it('a decline answers the browser with a card error whose PaymentIntent is the publishable subset', async () => {
    const emulator = await startEmulator();
    const server = stripeClient(emulator);
    const browser = stripeClient(emulator, { apiKey: PUBLISHABLE_KEY });
    const created = await manualIntent(server);

    const failure = await confirmAsBrowser(browser, created.id, {
      client_secret: created.client_secret!,
      payment_method: 'pm_card_chargeDeclined',
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Stripe.errors.StripeCardError);
    const { payment_intent } = (failure as Stripe.errors.StripeCardError).raw as { payment_intent?: object };
    expect(payment_intent).toMatchObject({ id: created.id, status: 'requires_payment_method' });
    expect(payment_intent).not.toHaveProperty('metadata');
  });

  it('is refused with 401 on every server-only endpoint, before anything happens', async () => {
    const emulator = await startEmulator();
    const server = stripeClient(emulator);
    const browser = stripeClient(emulator, { apiKey: PUBLISHABLE_KEY });
    const authorized = await authorize(server);
    const secret = { client_secret: authorized.client_secret! } as object;

    const attempts: Array<[string, () => Promise<unknown>]> = [
      ['create', () => browser.paymentIntents.create({ amount: 5_000, currency: 'usd' })],
      ['capture', () => browser.paymentIntents.capture(authorized.id, secret)],
      ['cancel', () => browser.paymentIntents.cancel(authorized.id, secret)],
      ['update', () => browser.paymentIntents.update(authorized.id, { metadata: { x: '1' } })],
      ['list', () => browser.paymentIntents.list()],
      ['search', () => browser.paymentIntents.search({ query: "status:'requires_capture'" })],
      ['refund', () => browser.refunds.create({ payment_intent: authorized.id })],
      ['charge', () => browser.charges.retrieve(String(authorized.latest_charge))],
      ['events', () => browser.events.list()],
    ];
    for (const [name, attempt] of attempts) {
      const failure = await attempt().catch((error: unknown) => error);
      expect(failure, name).toBeInstanceOf(Stripe.errors.StripeAuthenticationError);
      expect(failure, name).toMatchObject({
        statusCode: 401,
        type: 'StripeAuthenticationError',
        message: expect.stringMatching(
          /^This API call cannot be made with a publishable API key\. Please use a secret API key\./,
        ),
      });
    }
    // An injected failure is not consumed by a refused call.
    emulator.control.injectFailures('payment_intents.capture', 1, 'error');
    await expect(browser.paymentIntents.capture(authorized.id)).rejects.toMatchObject({ statusCode: 401 });
    await expect(server.paymentIntents.capture(authorized.id)).rejects.toMatchObject({ statusCode: 500 });

    expect((await server.paymentIntents.retrieve(authorized.id)).status).toBe('requires_capture');
    expect(emulator.control.counters()).toMatchObject({ captures: 0, cancellations: 0 });
  });

  it('keeps the secret key working, without a client secret, and refuses client_secret on its confirm as Stripe does', async () => {
    const emulator = await startEmulator();
    const server = stripeClient(emulator);
    const created = await manualIntent(server);

    const full = await server.paymentIntents.retrieve(created.id);
    expect(full.metadata).toEqual({ orderId: 'ord_pk' });
    expect(full).toHaveProperty('amount_capturable', 0);
    // The retrieve parameter is documented for both kinds of key.
    await expect(
      server.paymentIntents.retrieve(created.id, { client_secret: created.client_secret! }),
    ).resolves.toMatchObject({
      metadata: { orderId: 'ord_pk' },
    });
    await expect(
      server.paymentIntents.confirm(created.id, {
        client_secret: created.client_secret,
        payment_method: 'pm_card_visa',
      } as Stripe.PaymentIntentConfirmParams),
    ).rejects.toMatchObject({ statusCode: 400, code: 'parameter_unknown', param: 'client_secret' });

    const confirmed = await server.paymentIntents.confirm(created.id, { payment_method: 'pm_card_visa' });
    expect(confirmed).toMatchObject({ status: 'requires_capture', amount_capturable: 9_500 });
  });

  it('accepts only the configured publishable key when one is set, and never a live key', async () => {
    const emulator = await startEmulator({ publishableKey: 'pk_test_configured' });
    const server = stripeClient(emulator);
    const created = await manualIntent(server);
    const params = { client_secret: created.client_secret! };

    await expect(
      stripeClient(emulator, { apiKey: 'pk_test_configured' }).paymentIntents.retrieve(created.id, params),
    ).resolves.toMatchObject({ id: created.id });
    for (const apiKey of ['pk_test_someoneelse', 'pk_live_configured']) {
      await expect(
        stripeClient(emulator, { apiKey }).paymentIntents.retrieve(created.id, params),
      ).rejects.toMatchObject({
        type: 'StripeAuthenticationError',
        statusCode: 401,
        message: expect.stringMatching(/^Invalid API Key provided: pk_(test|live)_\*+/),
      });
    }
  });
});

describe('STRIPE_EMULATOR_PUBLISHABLE_KEY', () => {
  it('configures the one publishable key accepted, and must be a test publishable key', () => {
    expect(optionsFromEnv({}).publishableKey).toBeUndefined();
    expect(optionsFromEnv({ STRIPE_EMULATOR_PUBLISHABLE_KEY: 'pk_test_local' }).publishableKey).toBe('pk_test_local');
    expect(() => optionsFromEnv({ STRIPE_EMULATOR_PUBLISHABLE_KEY: 'sk_test_local' })).toThrow(
      /STRIPE_EMULATOR_PUBLISHABLE_KEY/,
    );
  });
});
