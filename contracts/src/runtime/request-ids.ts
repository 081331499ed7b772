import { randomUUID } from 'node:crypto';

/** A correlation id a caller may set: short, and nothing that could break a log line or a header. */
const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * How every hop (the router, the control plane, a cell) names a request: an id of its own, never one a caller sent,
 * since the id a buyer quotes from an error body must lead to the one request that made it; and the caller's
 * correlation id when well formed, else that own id. The router forwards the correlation id upstream as
 * X-Correlation-Id (and so does each call it fans out), so one search finds a request at every hop.
 */
export function requestIds(givenCorrelationId: string | string[] | undefined) {
  const requestId = randomUUID();
  const correlationId =
    typeof givenCorrelationId === 'string' && CORRELATION_ID.test(givenCorrelationId) ? givenCorrelationId : requestId;
  return { requestId, correlationId };
}
