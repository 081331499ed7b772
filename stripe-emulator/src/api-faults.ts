import type { OperationName } from './operations.js';

/**
 * `error`: the call fails with 500 api_error before the operation runs, so nothing happens and
 * nothing is saved under its idempotency key: a retry with the same key performs it.
 * `lost_response`: the operation runs (and its result is saved under the idempotency key), then
 * the connection is dropped before the response is written, as when a network fails after
 * Stripe acted. A retry with the same key gets the saved result.
 */
export type FailureMode = 'error' | 'lost_response';

export interface InjectedFailures {
  operation: OperationName;
  mode: FailureMode;
  remaining: number;
}

/** Failures and latency injected into API operations through the control API. */
export class ApiFaults {
  readonly #failures = new Map<OperationName, FailureMode[]>();
  readonly #latencyMs = new Map<OperationName, number>();
  /** Until when (epoch ms) every API call fails, as during a provider outage; 0: none. */
  #outageUntil = 0;

  /** Every API call fails with 500 api_error for `seconds` from now (0 ends an outage now). */
  startOutage(seconds: number, now = Date.now()): void {
    this.#outageUntil = seconds > 0 ? now + seconds * 1000 : 0;
  }

  /** When the outage in force ends, or null when there is none. */
  outageEndsAt(now = Date.now()): Date | null {
    return this.#outageUntil > now ? new Date(this.#outageUntil) : null;
  }

  /** Makes the next `count` calls to the operation fail in the given mode. */
  inject(operation: OperationName, count: number, mode: FailureMode): void {
    const queue = this.#failures.get(operation) ?? [];
    for (let i = 0; i < count; i += 1) queue.push(mode);
    this.#failures.set(operation, queue);
  }

  /** The failure, if any, that this call to the operation must suffer. */
  take(operation: OperationName): FailureMode | undefined {
    if (this.#outageUntil > Date.now()) return 'error';
    return this.#failures.get(operation)?.shift();
  }

  pending(): InjectedFailures[] {
    const pending: InjectedFailures[] = [];
    for (const [operation, queue] of this.#failures) {
      for (const mode of new Set(queue)) {
        pending.push({ operation, mode, remaining: queue.filter((queued) => queued === mode).length });
      }
    }
    return pending;
  }

  /**
   * Makes the operation take this long while holding its idempotency key, so concurrent
   * requests with the same key can be observed (0 removes the latency).
   */
  setLatency(operation: OperationName, ms: number): void {
    if (ms > 0) this.#latencyMs.set(operation, ms);
    else this.#latencyMs.delete(operation);
  }

  latencyFor(operation: OperationName): number {
    return this.#latencyMs.get(operation) ?? 0;
  }

  latencies(): Partial<Record<OperationName, number>> {
    return Object.fromEntries(this.#latencyMs);
  }

  clear(): void {
    this.#failures.clear();
    this.#latencyMs.clear();
    this.#outageUntil = 0;
  }
}
