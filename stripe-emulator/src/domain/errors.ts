import type { PaymentError, PaymentIntent } from './objects.js';

export type StripeErrorType = 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';

/** The `error` member of Stripe's error responses. */
export interface StripeErrorBody {
  type: StripeErrorType;
  message: string;
  code?: string;
  decline_code?: string;
  param?: string;
  doc_url?: string;
  charge?: string;
  payment_intent?: PaymentIntent;
  payment_method?: PaymentError['payment_method'];
}

/** An API failure, carrying the HTTP status and body Stripe answers with for it. */
export class StripeApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: StripeErrorBody,
  ) {
    super(body.message);
    this.name = 'StripeApiError';
  }

  toJSON(): { error: StripeErrorBody } {
    return { error: this.body };
  }
}

export function docUrl(code: string): string {
  return `https://stripe.com/docs/error-codes/${code.replaceAll('_', '-')}`;
}

export function invalidRequest(
  message: string,
  details: { code?: string; param?: string; paymentIntent?: PaymentIntent } = {},
): StripeApiError {
  return new StripeApiError(400, {
    type: 'invalid_request_error',
    message,
    ...(details.code && { code: details.code, doc_url: docUrl(details.code) }),
    ...(details.param && { param: details.param }),
    ...(details.paymentIntent && { payment_intent: details.paymentIntent }),
  });
}

export function resourceMissing(resource: string, id: string, param: string): StripeApiError {
  return new StripeApiError(404, {
    type: 'invalid_request_error',
    code: 'resource_missing',
    doc_url: docUrl('resource_missing'),
    message: `No such ${resource}: '${id}'`,
    param,
  });
}

/** The PaymentIntent's status does not allow the operation (Stripe's wording and code). */
export function unexpectedState(message: string, paymentIntent: PaymentIntent): StripeApiError {
  return invalidRequest(message, { code: 'payment_intent_unexpected_state', paymentIntent });
}

export function cardError(failure: PaymentError, paymentIntent: PaymentIntent): StripeApiError {
  return new StripeApiError(402, {
    type: 'card_error',
    code: failure.code,
    ...(failure.decline_code && { decline_code: failure.decline_code }),
    doc_url: failure.doc_url,
    message: failure.message,
    ...(failure.charge && { charge: failure.charge }),
    payment_intent: paymentIntent,
    payment_method: failure.payment_method,
  });
}

export function apiError(): StripeApiError {
  return new StripeApiError(500, {
    type: 'api_error',
    message: 'An unknown error occurred',
  });
}

export function idempotencyParamsMismatch(key: string): StripeApiError {
  return new StripeApiError(400, {
    type: 'idempotency_error',
    message:
      'Keys for idempotent requests can only be used with the same parameters they were first used with. ' +
      `Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

export function idempotencyEndpointMismatch(key: string, firstEndpoint: string, endpoint: string): StripeApiError {
  return new StripeApiError(400, {
    type: 'idempotency_error',
    message:
      `Keys for idempotent requests can only be used for the same endpoint they were first used for ('${firstEndpoint}' vs '${endpoint}'). ` +
      `Try using a key other than '${key}' if you meant to execute a different request.`,
  });
}

/** Another request with this key is still executing; nothing is saved, so a retry is safe. */
export function idempotencyKeyInUse(key: string): StripeApiError {
  return new StripeApiError(409, {
    type: 'idempotency_error',
    code: 'idempotency_key_in_use',
    doc_url: docUrl('idempotency_key_in_use'),
    message:
      'There is currently another in-progress request using this Idempotent Key (that probably means you ' +
      `submitted twice, and the other request is still going through): ${key}. Please try again later.`,
  });
}
