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
import { publishableKeyRefused } from './auth.js';
import type { AppEnv } from './env.js';
import { type FormObject, parseForm } from './form.js';
import type { Operation, PublishableAccess } from './operation.js';
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

function errorOutcome(error: StripeApiError, executed: boolean, access: PublishableAccess | null): Outcome {
  const body = error.toJSON();
  if (access && body.error.payment_intent) body.error.payment_intent = access.view(body.error.payment_intent);
  return { status: error.status, body: JSON.stringify(body), executed };
}

function clientSecretMissing(): StripeApiError {
  return invalidRequest('Missing required param: client_secret.', {
    code: 'parameter_missing',
    param: 'client_secret',
  });
}

function clientSecretMismatch(): StripeApiError {
  return invalidRequest(
    'The client_secret provided does not match the client_secret associated with the PaymentIntent.',
    { code: 'payment_intent_invalid_parameter', param: 'client_secret' },
  );
}

/**
 * A publishable key must name the object's client secret (Stripe.js sends it in the query of a
 * retrieve and in the body of a confirm); the parameter is then consumed here, so the endpoint
 * sees the same parameters as with a secret key.
 */
function checkClientSecret(access: PublishableAccess, form: FormObject, path: Record<string, string>): FormObject {
  const { client_secret: given, ...rest } = form;
  if (typeof given !== 'string' || given === '') throw clientSecretMissing();
  const expected = access.clientSecret(path);
  if (expected !== undefined && given !== expected) throw clientSecretMismatch();
  return rest;
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

  const path = c.req.param();
  // Set only for a publishable key (the handler has already refused one on other endpoints).
  const access = c.get('keyKind') === 'publishable' ? (operation.publishable ?? null) : null;
  let params: unknown;
  try {
    params = parseParams(operation.params, access ? checkClientSecret(access, form, path) : form);
  } catch (error) {
    if (error instanceof StripeApiError) return errorOutcome(error, false, access);
    throw error;
  }
  try {
    const result = operation.run({
      params,
      path,
      origin: { requestId: c.get('requestId'), idempotencyKey },
    });
    return { status: 200, body: JSON.stringify(access ? access.view(result) : result), executed: true };
  } catch (error) {
    // Errors raised while executing (a decline, a wrong state) are results Stripe saves and replays.
    if (error instanceof StripeApiError) return errorOutcome(error, true, access);
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
 * Serves one operation with Stripe's request semantics: the key's permission first (a
 * publishable key only where the operation allows it), then injected failures, then the
 * idempotency layer (POST only; Stripe ignores keys on GET), then validation and execution.
 */
export function operationHandler(operation: Operation, deps: HandlerDeps) {
  return async (c: Context<AppEnv>): Promise<Response> => {
    // Authorization comes before anything else, injected failures included.
    if (c.get('keyKind') === 'publishable' && !operation.publishable) throw publishableKeyRefused();
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
