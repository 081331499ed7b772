import type { EventSubscriber } from '../domain/events.js';
import { unixNow } from '../domain/ids.js';
import type { EventType, StripeEvent } from '../domain/objects.js';
import type { Logger } from '../log.js';
import type { Timers } from '../timers.js';
import type { WebhookEndpoint, WebhookEndpoints } from './endpoints.js';
import { NO_WEBHOOK_FAULTS, type WebhookFaults } from './faults.js';
import { signatureHeader } from './signature.js';

/**
 * Stripe retries failed deliveries with exponential backoff for up to three days; the
 * emulator keeps the shape and makes the schedule configurable so tests run in milliseconds.
 */
export interface WebhookRetryPolicy {
  /** Delay before the second attempt; each later delay doubles, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Attempts per delivery, the first included, before the delivery is given up. */
  maxAttempts: number;
  /** An endpoint that has not answered within this time has failed the attempt. */
  timeoutMs: number;
}

export const DEFAULT_WEBHOOK_RETRY: WebhookRetryPolicy = {
  baseDelayMs: 1_000,
  maxDelayMs: 60_000,
  maxAttempts: 8,
  timeoutMs: 10_000,
};

export interface DeliveryAttempt {
  eventId: string;
  eventType: EventType;
  endpointId: string;
  /** Which copy of the event this is (1-based; above 1 only with the `duplicates` fault). */
  copy: number;
  attempt: number;
  outcome: 'delivered' | 'failed' | 'dropped';
  /** The endpoint's HTTP status, or null when it was not reached. */
  status: number | null;
  error: string | null;
  at: string;
}

interface Delivery {
  event: StripeEvent;
  endpoint: WebhookEndpoint;
  payload: string;
  copy: number;
  attempts: number;
  generation: number;
}

interface HeldBatch {
  deliveries: Delivery[];
}

// The attempt log is for tests and debugging; a long-running emulator keeps only the tail.
const MAX_LOGGED_ATTEMPTS = 10_000;

/** Sends events to webhook endpoints, asynchronously, with retries and injectable faults. */
export class WebhookDispatcher implements EventSubscriber {
  #faults: WebhookFaults = NO_WEBHOOK_FAULTS;
  #held: HeldBatch | null = null;
  #outstanding = 0;
  #idleWaiters: Array<() => void> = [];
  #attempts: DeliveryAttempt[] = [];
  // Bumped by reset: work started before it (an in-flight request, say) is abandoned.
  #generation = 0;
  #inFlight = new AbortController();

  constructor(
    private readonly endpoints: WebhookEndpoints,
    private readonly timers: Timers,
    private readonly retry: WebhookRetryPolicy,
    private readonly log: Logger,
  ) {}

  subscriberCount(type: EventType): number {
    return this.endpoints.subscribedTo(type).length;
  }

  publish(event: StripeEvent): void {
    // Stripe sends pretty-printed JSON; the signature covers these exact bytes.
    const payload = JSON.stringify(event, null, 2);
    for (const endpoint of this.endpoints.subscribedTo(event.type)) {
      for (let copy = 1; copy <= this.#faults.duplicates; copy += 1) {
        const delivery = { event, endpoint, payload, copy, attempts: 0, generation: this.#generation };
        this.#outstanding += 1;
        // Always through a timer: delivery never happens inside the API request that caused it.
        this.timers.schedule(this.#faults.delayMs, () => this.#route(delivery));
      }
    }
  }

  get faults(): WebhookFaults {
    return this.#faults;
  }

  setFaults(faults: WebhookFaults): void {
    this.#faults = faults;
  }

  attempts(): DeliveryAttempt[] {
    return [...this.#attempts];
  }

  /** Deliveries not yet delivered or given up: waiting, held for reordering, or between retries. */
  get outstanding(): number {
    return this.#outstanding;
  }

  /** Resolves once every delivery published so far has been delivered or given up. */
  idle(): Promise<void> {
    if (this.#outstanding === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Forgets all pending deliveries, the attempt log and the faults (the caller clears timers). */
  reset(): void {
    this.#generation += 1;
    this.#inFlight.abort();
    this.#inFlight = new AbortController();
    this.#faults = NO_WEBHOOK_FAULTS;
    this.#held = null;
    this.#attempts = [];
    this.#outstanding = 0;
    this.#notifyIdle();
  }

  #route(delivery: Delivery): void {
    const reorder = this.#faults.reorder;
    if (!reorder) {
      void this.#attempt(delivery);
      return;
    }
    if (!this.#held) {
      const batch: HeldBatch = { deliveries: [] };
      this.#held = batch;
      this.timers.schedule(reorder.windowMs, () => void this.#release(batch));
    }
    this.#held.deliveries.push(delivery);
    if (this.#held.deliveries.length >= reorder.batchSize) void this.#release(this.#held);
  }

  async #release(batch: HeldBatch): Promise<void> {
    if (this.#held !== batch) return;
    this.#held = null;
    const deliveries =
      this.#faults.reorder?.order === 'shuffle' ? shuffled(batch.deliveries) : [...batch.deliveries].reverse();
    // One after another, so the endpoint really sees them in the reordered sequence.
    for (const delivery of deliveries) await this.#attempt(delivery);
  }

  async #attempt(delivery: Delivery): Promise<void> {
    if (delivery.generation !== this.#generation) return;
    delivery.attempts += 1;

    if (delivery.attempts === 1 && this.#faults.dropFirstAttempt) {
      this.#record(delivery, 'dropped', null, 'dropped by the dropFirstAttempt fault');
      this.#retryLater(delivery);
      return;
    }

    let status: number | null = null;
    let error: string | null = null;
    try {
      const response = await fetch(delivery.endpoint.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json; charset=utf-8',
          'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
          // Signed per attempt, as Stripe does, so a late retry still falls within tolerance.
          'stripe-signature': signatureHeader(
            delivery.payload,
            [delivery.endpoint.secret, ...(delivery.endpoint.previousSecret ? [delivery.endpoint.previousSecret] : [])],
            unixNow(),
          ),
        },
        body: delivery.payload,
        signal: AbortSignal.any([AbortSignal.timeout(this.retry.timeoutMs), this.#inFlight.signal]),
      });
      status = response.status;
      await response.body?.cancel();
    } catch (cause) {
      error = cause instanceof Error ? cause.message : String(cause);
    }
    if (delivery.generation !== this.#generation) return;

    const delivered = status !== null && status >= 200 && status < 300;
    this.#record(delivery, delivered ? 'delivered' : 'failed', status, error);
    if (delivered) this.#settle();
    else this.#retryLater(delivery);
  }

  #retryLater(delivery: Delivery): void {
    if (delivery.attempts >= this.retry.maxAttempts) {
      this.log('warn', 'webhook delivery given up', {
        eventId: delivery.event.id,
        endpointId: delivery.endpoint.id,
        attempts: delivery.attempts,
      });
      this.#settle();
      return;
    }
    const delay = Math.min(this.retry.baseDelayMs * 2 ** (delivery.attempts - 1), this.retry.maxDelayMs);
    this.timers.schedule(delay, () => void this.#attempt(delivery));
  }

  #record(delivery: Delivery, outcome: DeliveryAttempt['outcome'], status: number | null, error: string | null): void {
    const attempt: DeliveryAttempt = {
      eventId: delivery.event.id,
      eventType: delivery.event.type,
      endpointId: delivery.endpoint.id,
      copy: delivery.copy,
      attempt: delivery.attempts,
      outcome,
      status,
      error,
      at: new Date().toISOString(),
    };
    this.#attempts.push(attempt);
    if (this.#attempts.length > MAX_LOGGED_ATTEMPTS) this.#attempts.shift();
    this.log(outcome === 'delivered' ? 'info' : 'warn', 'webhook attempt', {
      eventId: attempt.eventId,
      eventType: attempt.eventType,
      endpointId: attempt.endpointId,
      copy: attempt.copy,
      attempt: attempt.attempt,
      outcome,
      status,
      error,
    });
  }

  #settle(): void {
    this.#outstanding -= 1;
    if (this.#outstanding === 0) this.#notifyIdle();
  }

  #notifyIdle(): void {
    const waiters = this.#idleWaiters;
    this.#idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}

function shuffled<T>(items: readonly T[]): T[] {
  const result = [...items];
  for (let i = result.length - 1; i > 0; i -= 1) {
    const j = Math.floor(Math.random() * (i + 1));
    [result[i], result[j]] = [result[j] as T, result[i] as T];
  }
  return result;
}
