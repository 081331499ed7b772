import type { AddressInfo } from 'node:net';
import { type ServerType, serve } from '@hono/node-server';
import { ApiFaults } from './api-faults.js';
import { EmulatorControl } from './control.js';
import { Charges } from './domain/charges.js';
import { EventLog } from './domain/events.js';
import { PaymentIntents } from './domain/payment-intents.js';
import { Refunds } from './domain/refunds.js';
import { Store } from './domain/store.js';
import { createApp } from './http/app.js';
import { chargeOperations } from './http/routes/charges.js';
import { eventOperations } from './http/routes/events.js';
import { paymentIntentOperations } from './http/routes/payment-intents.js';
import { refundOperations } from './http/routes/refunds.js';
import { IdempotencyStore } from './idempotency.js';
import { type Logger, silentLogger } from './log.js';
import { Timers } from './timers.js';
import { DEFAULT_WEBHOOK_RETRY, WebhookDispatcher, type WebhookRetryPolicy } from './webhooks/dispatcher.js';
import { type WebhookEndpointInput, WebhookEndpoints } from './webhooks/endpoints.js';

/** The API version of the `stripe` SDK the platform uses (23.x); events are rendered in it. */
export const DEFAULT_API_VERSION = '2026-10-28.endive';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface EmulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  host?: string;
  apiVersion?: string;
  /** How long `pm_card_delayed*` confirmations stay in `processing` (default 2 s). */
  processingDelayMs?: number;
  /** How long an uncaptured authorization lives before it is canceled (default 7 days, as for cards). */
  authorizationTtlMs?: number;
  /** How long idempotency keys are remembered (default 24 hours, Stripe's minimum). */
  idempotencyKeyTtlMs?: number;
  webhookRetry?: Partial<WebhookRetryPolicy>;
  webhookEndpoints?: WebhookEndpointInput[];
  /**
   * The publishable key the client side (Stripe.js, the demo buyer) uses. Unset: any `pk_test_`
   * key is accepted, as any `sk_test_` key is. Either way a publishable key can only retrieve and
   * confirm a PaymentIntent whose `client_secret` it presents.
   */
  publishableKey?: string;
  log?: Logger;
}

export interface Emulator {
  /** Base URL, e.g. `http://127.0.0.1:12111`. */
  url: string;
  host: string;
  port: number;
  control: EmulatorControl;
  /** Stops the server, pending deliveries and timers. */
  close(): Promise<void>;
}

function listen(server: ServerType): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve(server.address() as AddressInfo);
    });
  });
}

export async function createEmulator(options: EmulatorOptions = {}): Promise<Emulator> {
  const host = options.host ?? '127.0.0.1';
  const apiVersion = options.apiVersion ?? DEFAULT_API_VERSION;
  const log = options.log ?? silentLogger;

  const timers = new Timers();
  const store = new Store();
  const endpoints = new WebhookEndpoints();
  for (const endpoint of options.webhookEndpoints ?? []) endpoints.add(endpoint);
  const dispatcher = new WebhookDispatcher(
    endpoints,
    timers,
    { ...DEFAULT_WEBHOOK_RETRY, ...options.webhookRetry },
    log,
  );
  const events = new EventLog(store, apiVersion, dispatcher);
  const paymentIntents = new PaymentIntents(store, events, timers, {
    processingDelayMs: options.processingDelayMs ?? 2_000,
    authorizationTtlMs: options.authorizationTtlMs ?? 7 * DAY_MS,
  });
  const idempotency = new IdempotencyStore(options.idempotencyKeyTtlMs ?? DAY_MS);
  const apiFaults = new ApiFaults();
  const control = new EmulatorControl({ store, idempotency, apiFaults, endpoints, dispatcher, timers });

  const app = createApp({
    operations: [
      ...paymentIntentOperations(paymentIntents, store),
      ...refundOperations(new Refunds(store, events), store),
      ...chargeOperations(new Charges(store), store),
      ...eventOperations(events),
    ],
    control,
    idempotency,
    apiFaults,
    apiVersion,
    log,
    publishableKey: options.publishableKey,
  });

  const server = serve({ fetch: app.fetch, port: options.port ?? 0, hostname: host });
  const { port } = await listen(server);

  return {
    url: `http://${host}:${port}`,
    host,
    port,
    control,
    close: async () => {
      timers.clear();
      dispatcher.reset();
      await new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive connections (the SDK's agent keeps them) would otherwise hold close() open.
        if ('closeAllConnections' in server) server.closeAllConnections();
      });
    },
  };
}
