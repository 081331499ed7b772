import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type ErrorCode,
  type ErrorOptions,
  errorAnswer,
  type Logger,
  type RouterMetrics,
  requestIds,
} from '@onsale/contracts';

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
  const { requestId, correlationId } = requestIds(incoming.headers['x-correlation-id']);
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

/**
 * Answers with the platform's one error body, written straight on the Node response; to a browser loading a page (a
 * buyer's or a promoter's, while the control plane or a cell is not answering) the same answer as a page a person can
 * read, which loads itself again when the error says to retry, instead of a screen of JSON.
 */
export function answerError(x: Exchange, code: ErrorCode, message: string, opts?: ErrorOptions): void {
  const { status, headers, body } = errorAnswer(code, message, x.requestId, opts);
  const page = navigates(x.incoming);
  const text = page ? errorPage(x, status, message, headers['retry-after']) : JSON.stringify(body);
  x.outgoing.writeHead(status, {
    ...exchangeHeaders(x),
    ...headers,
    'content-type': page ? 'text/html; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
  });
  x.outgoing.end(text);
}

/** A browser's navigation (Sec-Fetch-Mode, or an Accept that puts HTML first from one that sends no fetch metadata). */
const navigates = (incoming: IncomingMessage) => {
  const mode = incoming.headers['sec-fetch-mode'];
  return mode === undefined ? /^\s*text\/html/i.test(incoming.headers.accept ?? '') : mode === 'navigate';
};

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function errorPage(x: Exchange, status: number, message: string, retryAfter: string | undefined): string {
  const title =
    status >= 500 ? 'We cannot answer right now' : status === 404 ? 'Page not found' : 'This request was refused';
  // A page loaded with GET is loaded again when the platform may answer by then (a 502 or 504 too, which name no
  // wait); a form's POST is never sent again by itself.
  const retry = x.incoming.method === 'GET' ? (retryAfter ?? (status >= 502 ? '5' : undefined)) : undefined;
  const again = retry ? `<meta http-equiv="refresh" content="${Number(retry)}">` : '';
  const wait = retry ? `<p>This page tries again by itself in ${Number(retry)} seconds.</p>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${again}<title>${title}</title></head><body><main><h1>${title}</h1><p>${escapeHtml(message)}.</p>${wait}<p><small>Reference: ${x.requestId}</small></p></main></body></html>`;
}
