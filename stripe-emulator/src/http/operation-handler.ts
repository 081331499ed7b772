import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { ApiFaults } from '../api-faults.js';
import {
  apiError,
  idempotencyEndpointMismatch,
  idempotencyKeyInUse,
  idempotencyParamsMismatch,
  invalidRequest,
  StripeApiError,
} from '../domain/errors.js';
import { canonicalParams, type IdempotencyStore } from '../idempotency.js';
import type { AppEnv } from './env.js';
import { type FormObject, parseForm } from './form.js';
import type { Operation } from './operation.js';
import { parseParams } from './params.js';

export interface HandlerDeps {
  idempotency: IdempotencyStore;
  apiFaults: ApiFaults;
}

interface Outcome {
  status: number;
  body: string;
  /** False when the request failed validation, before the endpoint began executing. */
  executed: boolean;
  /** Set when the response is a replay: the id of the request that produced it. */
  originalRequest?: string;
}

const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

function errorOutcome(error: StripeApiError, executed: boolean): Outcome {
  return { status: error.status, body: JSON.stringify(error), executed };
}

async function execute(
  operation: Operation,
  form: FormObject,
  c: Context<AppEnv>,
  deps: HandlerDeps,
  idempotencyKey: string | null,
): Promise<Outcome> {
  const latency = deps.apiFaults.latencyFor(operation.name);
  if (latency > 0) await sleep(latency);

  let params: unknown;
  try {
    params = parseParams(operation.params, form);
  } catch (error) {
    if (error instanceof StripeApiError) return errorOutcome(error, false);
    throw error;
  }
  try {
    const result = operation.run({
      params,
      path: c.req.param(),
      origin: { requestId: c.get('requestId'), idempotencyKey },
    });
    return { status: 200, body: JSON.stringify(result), executed: true };
  } catch (error) {
    // Errors raised while executing (a decline, a wrong state) are results Stripe saves and replays.
    if (error instanceof StripeApiError) return errorOutcome(error, true);
    throw error;
  }
}

async function executeIdempotently(
  operation: Operation,
  form: FormObject,
  c: Context<AppEnv>,
  deps: HandlerDeps,
  key: string,
): Promise<Outcome> {
  if (key.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw invalidRequest(`Idempotency keys can be at most ${MAX_IDEMPOTENCY_KEY_LENGTH} characters long.`);
  }
  const apiKey = c.get('apiKey');
  const endpoint = `${operation.method} ${c.req.path}`;
  const claim = deps.idempotency.claim(apiKey, key, { endpoint, params: canonicalParams(form) });
  switch (claim.kind) {
    case 'replay':
      return { ...claim.response, executed: true, originalRequest: claim.response.requestId };
    case 'in_flight':
      throw idempotencyKeyInUse(key);
    case 'endpoint_mismatch':
      throw idempotencyEndpointMismatch(key, claim.firstEndpoint, endpoint);
    case 'params_mismatch':
      throw idempotencyParamsMismatch(key);
    case 'claimed':
      break;
  }

  let outcome: Outcome;
  try {
    outcome = await execute(operation, form, c, deps, key);
  } catch (error) {
    deps.idempotency.release(apiKey, key);
    throw error;
  }
  if (outcome.executed) {
    deps.idempotency.save(apiKey, key, { status: outcome.status, body: outcome.body, requestId: c.get('requestId') });
  } else {
    deps.idempotency.release(apiKey, key);
  }
  return outcome;
}

/**
 * Serves one operation with Stripe's request semantics: injected failures first, then the
 * idempotency layer (POST only; Stripe ignores keys on GET), then validation and execution.
 */
export function operationHandler(operation: Operation, deps: HandlerDeps) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    const failure = deps.apiFaults.take(operation.name);
    // Fails before the endpoint runs, so nothing is saved under the idempotency key.
    if (failure === 'error') throw apiError();

    const isPost = operation.method === 'POST';
    const form = parseForm(isPost ? await c.req.text() : new URL(c.req.url).search.slice(1));
    const idempotencyKey = isPost ? (c.req.header('Idempotency-Key') ?? null) : null;
    const outcome =
      idempotencyKey === null
        ? await execute(operation, form, c, deps, null)
        : await executeIdempotently(operation, form, c, deps, idempotencyKey);

    if (failure === 'lost_response') {
      // The operation has taken effect; the caller just never hears about it.
      c.env.incoming.socket.destroy();
    }
    if (idempotencyKey !== null) c.header('Idempotency-Key', idempotencyKey);
    if (outcome.originalRequest !== undefined) {
      c.header('Idempotent-Replayed', 'true');
      c.header('Original-Request', outcome.originalRequest);
    }
    return c.body(outcome.body, outcome.status as ContentfulStatusCode, { 'Content-Type': 'application/json' });
  };
}
