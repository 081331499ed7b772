import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { afterEach } from 'vitest';
import { createEmulator, type Emulator, type EmulatorOptions } from '../src/index.js';

export const API_KEY = 'sk_test_emulator';

/** Fast schedules so retry and delay behaviour is observable within a test. */
export const FAST: EmulatorOptions = {
  processingDelayMs: 100,
  webhookRetry: { baseDelayMs: 20, maxDelayMs: 100, maxAttempts: 5, timeoutMs: 2_000 },
};

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
});

export async function startEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const emulator = await createEmulator({ ...FAST, ...options });
  cleanups.push(() => emulator.close());
  return emulator;
}

export function stripeClient(
  emulator: Emulator,
  options: { apiKey?: string; maxNetworkRetries?: number } = {},
): Stripe {
  return new Stripe(options.apiKey ?? API_KEY, {
    host: '127.0.0.1',
    port: emulator.port,
    protocol: 'http',
    maxNetworkRetries: options.maxNetworkRetries ?? 0,
  });
}

/** Creates a PaymentIntent authorized with `pm_card_visa` and manual capture. */
export function authorize(stripe: Stripe, params: Partial<Stripe.PaymentIntentCreateParams> = {}) {
  return stripe.paymentIntents.create({
    amount: 5_000,
    currency: 'usd',
    capture_method: 'manual',
    payment_method: 'pm_card_visa',
    confirm: true,
    ...params,
  });
}

export interface ReceivedWebhook {
  body: string;
  headers: IncomingHttpHeaders;
  at: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Resolves once at least `count` requests have arrived. */
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
}

/**
 * A local HTTP endpoint that records every webhook request. `respond` picks the status of
 * the n-th request (1-based) and may delay the answer.
 */
export async function startReceiver(
  respond: (n: number) => number | { status: number; delayMs: number } = () => 200,
): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ body: Buffer.concat(chunks).toString('utf8'), headers: request.headers, at: Date.now() });
      const answer = respond(received.length);
      const { status, delayMs } = typeof answer === 'number' ? { status: answer, delayMs: 0 } : answer;
      setTimeout(() => response.writeHead(status).end(), delayMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks`,
    received,
    waitFor: async (count, timeoutMs = 5_000) => {
      const deadline = Date.now() + timeoutMs;
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhooks, got ${received.length}`);
        await sleep(10);
      }
      return received;
    },
  };
}

/** A loopback port nothing listens on: connections to it are refused. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Verifies a received webhook the way the platform must: with the SDK, on the raw body. */
export function verify(stripe: Stripe, webhook: ReceivedWebhook, secret: string): Stripe.Event {
  return stripe.webhooks.constructEvent(webhook.body, String(webhook.headers['stripe-signature']), secret);
}

/** Polls until the check passes (for state that changes on the emulator's own timers). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 3_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(20);
    }
  }
}
