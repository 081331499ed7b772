import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ErrorCode, type ErrorOptions, errorAnswer, type Logger, type RouterMetrics } from '@onsale/contracts';

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** One request through the router, from its arrival to the end of its answer. */
export interface Exchange {
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  requestId: string;
  correlationId: string;
  /** performance.now() at its arrival. */
  started: number;
  /** Metrics and log label of where the request went: a cell id, "control-plane", "router" or "none". */
  upstream: string;
}

/**
 * Names a request (its own id, and the caller's correlation id when well formed) and has it counted and logged when
 * its answer is over, streamed bodies included; 499 when the client left before any answer.
 */
export function beginExchange(
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  metrics: RouterMetrics,
  log: Logger,
): Exchange {
  const started = performance.now();
  const requestId = randomUUID();
  const given = incoming.headers['x-correlation-id'];
  const correlationId = typeof given === 'string' && CORRELATION_ID.test(given) ? given : requestId;
  const exchange: Exchange = { incoming, outgoing, requestId, correlationId, started, upstream: 'none' };
  outgoing.once('close', () => {
    const status = outgoing.headersSent ? outgoing.statusCode : 499;
    const ms = performance.now() - started;
    metrics.observe(exchange.upstream, status, ms / 1000);
    log.info('request', {
      requestId,
      correlationId,
      method: incoming.method,
      path: incoming.url?.split('?')[0],
      upstream: exchange.upstream,
      status,
      ms: Math.round(ms),
    });
  });
  return exchange;
}

/** The headers every answer the router makes itself carries. */
export const exchangeHeaders = (x: Exchange) => ({ 'x-request-id': x.requestId, 'x-correlation-id': x.correlationId });

/** Answers with the platform's one error body, written straight on the Node response. */
export function answerError(x: Exchange, code: ErrorCode, message: string, opts?: ErrorOptions): void {
  const { status, headers, body } = errorAnswer(code, message, x.requestId, opts);
  const json = JSON.stringify(body);
  x.outgoing.writeHead(status, {
    ...exchangeHeaders(x),
    ...headers,
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(json),
  });
  x.outgoing.end(json);
}
