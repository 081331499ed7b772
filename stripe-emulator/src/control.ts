import type { ApiFaults, FailureMode, InjectedFailures } from './api-faults.js';
import type { Charge, PaymentIntent } from './domain/objects.js';
import { type Counters, type Store, snapshot } from './domain/store.js';
import type { IdempotencyStore } from './idempotency.js';
import type { OperationName } from './operations.js';
import type { Timers } from './timers.js';
import type { DeliveryAttempt, WebhookDispatcher } from './webhooks/dispatcher.js';
import type { WebhookEndpoint, WebhookEndpointInput, WebhookEndpoints } from './webhooks/endpoints.js';
import { NO_WEBHOOK_FAULTS, type WebhookFaults } from './webhooks/faults.js';

export interface ControlParts {
  store: Store;
  idempotency: IdempotencyStore;
  apiFaults: ApiFaults;
  endpoints: WebhookEndpoints;
  dispatcher: WebhookDispatcher;
  timers: Timers;
}

/**
 * What a test (or the `/__emulator` HTTP API) can do to the emulator that Stripe's API cannot:
 * register webhook endpoints, inject faults, read what actually happened, and reset.
 */
export class EmulatorControl {
  constructor(private readonly parts: ControlParts) {}

  addWebhookEndpoint(input: WebhookEndpointInput): WebhookEndpoint {
    return this.parts.endpoints.add(input);
  }

  removeWebhookEndpoint(id: string): boolean {
    return this.parts.endpoints.remove(id);
  }

  webhookEndpoints(): WebhookEndpoint[] {
    return this.parts.endpoints.list();
  }

  /** Replaces the webhook faults; fields left out take their fault-free values. */
  setWebhookFaults(faults: Partial<WebhookFaults>): WebhookFaults {
    const next = { ...NO_WEBHOOK_FAULTS, ...faults };
    this.parts.dispatcher.setFaults(next);
    return next;
  }

  webhookFaults(): WebhookFaults {
    return this.parts.dispatcher.faults;
  }

  webhookAttempts(): DeliveryAttempt[] {
    return this.parts.dispatcher.attempts();
  }

  outstandingWebhooks(): number {
    return this.parts.dispatcher.outstanding;
  }

  /** Resolves when every event emitted so far has been delivered or given up. */
  async waitForWebhooks(timeoutMs = 10_000): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`webhooks still outstanding after ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      await Promise.race([this.parts.dispatcher.idle(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Makes the next `count` calls to the operation fail (see FailureMode). */
  injectFailures(operation: OperationName, count: number, mode: FailureMode = 'error'): void {
    this.parts.apiFaults.inject(operation, count, mode);
  }

  pendingFailures(): InjectedFailures[] {
    return this.parts.apiFaults.pending();
  }

  startOutage(seconds: number): { until: string | null } {
    this.parts.apiFaults.startOutage(seconds);
    return this.outage();
  }

  outage(): { until: string | null } {
    return { until: this.parts.apiFaults.outageEndsAt()?.toISOString() ?? null };
  }

  setLatency(operation: OperationName, ms: number): void {
    this.parts.apiFaults.setLatency(operation, ms);
  }

  latencies(): Partial<Record<OperationName, number>> {
    return this.parts.apiFaults.latencies();
  }

  counters(): Counters {
    return { ...this.parts.store.counters };
  }

  /** Every PaymentIntent, oldest first. */
  paymentIntents(): PaymentIntent[] {
    return [...this.parts.store.paymentIntents.values()].map(snapshot);
  }

  /** Every charge (what was captured and refunded of each intent), oldest first. */
  charges(): Charge[] {
    return [...this.parts.store.charges.values()].map(snapshot);
  }

  /**
   * Forgets all objects, events, idempotency keys, counters, faults and pending work (delayed
   * authorizations, webhook deliveries). Registered webhook endpoints stay: they are configuration.
   */
  reset(): void {
    this.parts.timers.clear();
    this.parts.dispatcher.reset();
    this.parts.apiFaults.clear();
    this.parts.idempotency.clear();
    this.parts.store.clear();
  }
}
