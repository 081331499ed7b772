/** A response saved under an idempotency key, replayed byte for byte. */
export interface SavedResponse {
  status: number;
  body: string;
  requestId: string;
}

/** The request a key was first used for: the endpoint, and its parameters in canonical form. */
export interface IdempotentRequest {
  endpoint: string;
  params: string;
}

export type Claim =
  | { kind: 'claimed' }
  | { kind: 'replay'; response: SavedResponse }
  | { kind: 'in_flight' }
  | { kind: 'endpoint_mismatch'; firstEndpoint: string }
  | { kind: 'params_mismatch' };

interface Entry {
  request: IdempotentRequest;
  savedAt: number;
  response: SavedResponse | null;
}

/**
 * Stripe's idempotency layer: keys are scoped to the API key; a key is bound to the endpoint
 * and parameters of its first request; the first response is saved once the endpoint has
 * started executing, and replayed for the same request; while that request is still executing,
 * the key is in use. Keys are forgotten after `ttlMs` (Stripe: at least 24 hours).
 */
export class IdempotencyStore {
  readonly #entries = new Map<string, Entry>();
  #prunedAt = Date.now();

  constructor(private readonly ttlMs: number) {}

  claim(apiKey: string, key: string, request: IdempotentRequest): Claim {
    this.#pruneExpired();
    const id = scopedKey(apiKey, key);
    const entry = this.#entries.get(id);
    if (!entry || this.#expired(entry)) {
      this.#entries.set(id, { request, savedAt: Date.now(), response: null });
      return { kind: 'claimed' };
    }
    if (entry.request.endpoint !== request.endpoint) {
      return { kind: 'endpoint_mismatch', firstEndpoint: entry.request.endpoint };
    }
    if (entry.request.params !== request.params) return { kind: 'params_mismatch' };
    if (entry.response === null) return { kind: 'in_flight' };
    return { kind: 'replay', response: entry.response };
  }

  save(apiKey: string, key: string, response: SavedResponse): void {
    const entry = this.#entries.get(scopedKey(apiKey, key));
    if (entry) entry.response = response;
  }

  /** Gives up a claim whose request never started executing, so the key can be used afresh. */
  release(apiKey: string, key: string): void {
    this.#entries.delete(scopedKey(apiKey, key));
  }

  clear(): void {
    this.#entries.clear();
  }

  #expired(entry: Entry): boolean {
    return Date.now() - entry.savedAt > this.ttlMs;
  }

  // A long-running emulator would otherwise keep every key it has ever seen.
  #pruneExpired(): void {
    if (Date.now() - this.#prunedAt < PRUNE_INTERVAL_MS) return;
    this.#prunedAt = Date.now();
    for (const [id, entry] of this.#entries) {
      if (entry.response !== null && this.#expired(entry)) this.#entries.delete(id);
    }
  }
}

const PRUNE_INTERVAL_MS = 60_000;

function scopedKey(apiKey: string, key: string): string {
  return `${apiKey}\u0000${key}`;
}

/** Parameters in a canonical form (sorted keys), so equal parameters compare equal. */
export function canonicalParams(params: unknown): string {
  return JSON.stringify(params, (_key, value: unknown) =>
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  );
}
