import { z } from 'zod';

/**
 * One error body for every service of the platform. `code` is machine-readable and stable;
 * `details` names the offending field, row or seats.
 */
export const errorCodes = {
  bad_request: 400,
  validation_failed: 400,
  unauthenticated: 401,
  forbidden: 403,
  admission_invalid: 403,
  /** The join's proof of work is missing, not the platform's, spent, expired or short of the onsale's difficulty. */
  proof_of_work_invalid: 403,
  /** The event moved to another cell after this admission token was minted: fetch a fresh one from the waiting room. */
  admission_cell_moved: 409,
  not_found: 404,
  /** The order is the buyer's but its tickets (or their PDF) are not ready yet: try again shortly. */
  tickets_not_issued: 404,
  /** The ticket was voided (event cancelled, order refunded): it admits nobody. */
  ticket_voided: 410,
  method_not_allowed: 405,
  /** The client did not send its whole request body in time: nothing of it went on to a service. */
  request_timeout: 408,
  seats_not_found: 404,
  event_not_found: 404,
  seats_unavailable: 409,
  buyer_limit_exceeded: 409,
  onsale_paused: 409,
  event_canceled: 409,
  idempotency_key_reused: 409,
  conflict: 409,
  order_not_releasable: 409,
  event_conflict: 409,
  payload_too_large: 413,
  /** The body is in a media type the route does not take (its document lists the ones it does). */
  unsupported_media_type: 415,
  /** The request line and headers exceed what a server reads (Node's parser: 16 KiB). */
  headers_too_large: 431,
  rate_limited: 429,
  internal: 500,
  cell_unavailable: 503,
  /** The identity provider's keys could not be fetched: no verdict on the token, so retry shortly rather than sign in again. */
  identity_unavailable: 503,
  /** A signing key could not be found or opened (its key-encryption key is missing): an operator must act, retrying will not help soon. */
  signing_key_unavailable: 503,
  /** A data store this service needs (its database, its Redis) cannot be reached: no verdict, retry shortly. */
  store_unavailable: 503,
  /** Redis lost the event's waiting room; the scheduler rebuilds it from the onsale record within a tick. */
  waiting_room_unavailable: 503,
  epoch_fenced: 503,
  /** The event is being moved between cells: new holds pause for seconds (Retry-After). */
  event_moving: 503,
  upstream_timeout: 504,
} as const;

export type ErrorCode = keyof typeof errorCodes;

export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    requestId: z.string().optional(),
    details: z.unknown().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** A field-level problem, as listed in `details.issues` of a validation error. */
export const FieldIssue = z.object({ path: z.string(), message: z.string() });
export type FieldIssue = z.infer<typeof FieldIssue>;
