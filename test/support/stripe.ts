import { randomBytes } from 'node:crypto';
import { setLogSink } from '@onsale/contracts';
import { createEmulator, type Emulator } from '@onsale/stripe-emulator';
import Stripe from 'stripe';
import type { TestCell } from './cell';

export const STRIPE_TEST_KEY = 'sk_test_onsale_platform';

/** The emulator on a free port with delivery retries fast enough to watch within a test. */
export async function startStripeEmulator(): Promise<Emulator> {
  return createEmulator({
    processingDelayMs: 200,
    webhookRetry: { baseDelayMs: 200, maxDelayMs: 1_000, maxAttempts: 30, timeoutMs: 5_000 },
  });
}

/** The SDK pointed at the emulator, with the SDK's own retries off so tests see every failure. */
export function stripeClient(emulator: Emulator, maxNetworkRetries = 0): Stripe {
  return new Stripe(STRIPE_TEST_KEY, { host: emulator.host, port: emulator.port, protocol: 'http', maxNetworkRetries });
}

export const newWebhookSecret = () => `whsec_${randomBytes(24).toString('base64url')}`;

/** What a cell API needs to take the emulator's webhooks (pass as `startTestCell(..., { env })`). */
export function stripeApiEnv(emulator: Emulator, webhookSecret: string): Record<string, string> {
  return { STRIPE_SECRET_KEY: STRIPE_TEST_KEY, STRIPE_API_BASE: emulator.url, STRIPE_WEBHOOK_SECRET: webhookSecret };
}

/** What the payment worker process needs to reach the emulator. */
export function stripeWorkerEnv(emulator: Emulator): Record<string, string> {
  return { STRIPE_SECRET_KEY: STRIPE_TEST_KEY, STRIPE_API_BASE: emulator.url, STRIPE_MAX_NETWORK_RETRIES: '0' };
}

/** Points the emulator's deliveries at the cell's webhook route. */
export function sendWebhooksTo(emulator: Emulator, cellUrl: string, secret: string) {
  return emulator.control.addWebhookEndpoint({ url: `${cellUrl}/webhooks/stripe`, secret });
}

/**
 * Plays the buyer's browser: reads the client secret from the order view (as the page does)
 * and confirms the PaymentIntent it names with a test card. Returns the intent id and, for a
 * declined card, the SDK's card error.
 */
export async function payInBrowser(
  stripe: Stripe,
  order: () => Promise<Response>,
  paymentMethod: string,
  timeoutMs = 30_000,
): Promise<{ paymentIntentId: string; clientSecret: string; declined?: Stripe.errors.StripeCardError }> {
  const deadline = Date.now() + timeoutMs;
  let clientSecret: string | undefined;
  while (!clientSecret) {
    const view = await (await order()).json();
    clientSecret = view.payment?.clientSecret;
    if (!clientSecret && Date.now() > deadline) throw new Error(`no client secret on the order (${view.status})`);
    if (!clientSecret) await new Promise((r) => setTimeout(r, 100));
  }
  const paymentIntentId = clientSecret.slice(0, clientSecret.indexOf('_secret_'));
  try {
    await stripe.paymentIntents.confirm(paymentIntentId, { payment_method: paymentMethod });
    return { paymentIntentId, clientSecret };
  } catch (err) {
    if (err instanceof Stripe.errors.StripeCardError) return { paymentIntentId, clientSecret, declined: err };
    throw err;
  }
}

/** Every line the platform logs in this process from now on (and still printed, for failures). */
export function captureLogs() {
  const lines: string[] = [];
  const previous = setLogSink((line) => {
    lines.push(line);
    if (process.env.TEST_SHOW_LOGS) previous(line);
  });
  return { lines, restore: () => setLogSink(previous) };
}

/** Rows the cell wrote for one order, for "one effect" assertions. */
export async function eventCounts(cell: TestCell, orderId: string): Promise<Record<string, number>> {
  const rows = await cell.db.query<{ event_type: string; n: number }>(
    'SELECT event_type, count(*)::int AS n FROM outbox WHERE aggregate_id = $1 GROUP BY event_type',
    [orderId],
  );
  return Object.fromEntries(rows.map((r) => [r.event_type, r.n]));
}

/** Every PaymentIntent of an emulator running as a process of its own (a platform's), read over its control API. */
export async function emulatorIntents(stripeUrl: string) {
  const res = await fetch(`${stripeUrl}/__emulator/payment-intents`);
  return (
    (await res.json()) as { data: Pick<Stripe.PaymentIntent, 'id' | 'status' | 'amount_received' | 'metadata'>[] }
  ).data;
}

/** Every charge the emulator made: what it captured and refunded of each PaymentIntent. */
export async function emulatorCharges(stripeUrl: string) {
  const res = await fetch(`${stripeUrl}/__emulator/charges`);
  return (
    (await res.json()) as {
      data: Pick<Stripe.Charge, 'id' | 'payment_intent' | 'amount_captured' | 'amount_refunded'>[];
    }
  ).data;
}

/** The intents the emulator holds for one order (found by the metadata the platform sets). */
export const intentsFor = (emulator: Emulator, orderId: string) =>
  emulator.control.paymentIntents().filter((pi) => pi.metadata.orderId === orderId);
