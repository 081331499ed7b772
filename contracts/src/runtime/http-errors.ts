import { randomUUID } from 'node:crypto';
import { type Server, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context } from 'hono';
import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import { ErrorBody, type ErrorCode, errorCodes, type FieldIssue } from '../errors';
import { acceptedInputIssues } from '../input-rules';
import type { Logger } from './log';

/**
 * The one way every service of the platform turns a refusal or a failure into an HTTP answer:
 * the error class the domain throws, the renderer every app installs as `onError`, and the
 * OpenAPI responses routes declare. The status always comes from `errorCodes`.
 */

/** A refusal the caller can act on. Routes, verbs and consumers throw it; the renderer maps its code to a status. */
export class DomainError extends Error {
  override name = 'DomainError';
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** Seconds the caller should wait before retrying; sent as Retry-After. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
  get status(): number {
    return errorCodes[this.code];
  }
}

/** Codes whose retry has a known horizon, when the thrower did not give one. */
const DEFAULT_RETRY_AFTER: Partial<Record<ErrorCode, number>> = {
  event_moving: 2, // a moving event sells again, on its new cell, within seconds
  epoch_fenced: 5, // the router follows the new writer's epoch within a directory refresh
  cell_unavailable: 5, // every 503 says when to come back, whoever answers it
  identity_unavailable: 5,
  signing_key_unavailable: 30,
  waiting_room_unavailable: 2,
  store_unavailable: 5,
};

/**
 * Every error answer names its code in this header as well as in the body, so a proxy can act on the code without
 * reading the body (the router walks an order's trail past a cell that answers `not_found`).
 */
export const ERROR_CODE_HEADER = 'x-error-code';

/** What the renderer needs from a request's context: its id, and where to log what went wrong. */
export interface ErrorContextVariables {
  requestId: string;
  log?: Logger;
}
type AnyContext = Context<{ Variables: ErrorContextVariables }>;

export interface ErrorOptions {
  details?: unknown;
  /** Seconds; sent as Retry-After. */
  retryAfter?: number;
}

/**
 * The platform's one error answer, without a framework: its status, the headers it needs and its body. Hono apps
 * answer it through `errorResponse`; the router's forwarding path writes it on the Node response itself.
 */
export function errorAnswer(code: ErrorCode, message: string, requestId: string, opts: ErrorOptions = {}) {
  const body: ErrorBody = {
    error: { code, message, requestId, ...(opts.details === undefined ? {} : { details: opts.details }) },
  };
  const headers: Record<string, string> = { [ERROR_CODE_HEADER]: code };
  const retryAfter = opts.retryAfter ?? DEFAULT_RETRY_AFTER[code];
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  // The rest of an oversized body is never read, so this connection cannot carry another request.
  if (code === 'payload_too_large') headers.connection = 'close';
  return { status: errorCodes[code], headers, body };
}

/** What Node's HTTP parser refuses, by its error code; anything else it refuses is a malformed request. */
const UNPARSABLE: Record<string, [ErrorCode, string]> = {
  HPE_HEADER_OVERFLOW: ['headers_too_large', 'the request line and headers are over the size a server reads'],
  HPE_CHUNK_EXTENSIONS_OVERFLOW: ['payload_too_large', 'the chunk extensions are over the size a server reads'],
  ERR_HTTP_REQUEST_TIMEOUT: ['request_timeout', 'the request did not arrive in time'],
};

/**
 * A request Node's parser refuses (headers over its limit, a malformed request line, an unknown method, a request
 * that did not arrive in time) never reaches the app, and Node answers it with a bare status and no body. The server
 * answers it in the platform's one body instead, with the status Node would give, then closes the connection, whose
 * framing is lost. As Node does, it writes nothing when an answer is already under way on the connection.
 */
export function answerUnparsableRequests<S extends Server>(server: S): S {
  server.on(
    'clientError',
    (err: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
      if (socket.writable && !socket._httpMessage?.headersSent) {
        const [code, message] = UNPARSABLE[err.code ?? ''] ?? ['bad_request', 'the request is not valid HTTP/1.1'];
        const { status, headers, body } = errorAnswer(code, message, randomUUID(), { details: { reason: err.code } });
        const json = JSON.stringify(body);
        const head = {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(json),
          connection: 'close',
        };
        socket.write(
          `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(head)
            .map(([name, value]) => `${name}: ${value}\r\n`)
            .join('')}\r\n${json}`,
        );
      }
      socket.destroy(err);
    },
  );
  return server;
}

/** An error answer in the platform's one body. */
export function errorResponse(c: Context, code: ErrorCode, message: string, opts: ErrorOptions = {}) {
  const answer = errorAnswer(code, message, (c as AnyContext).get('requestId') ?? '', opts);
  for (const name in answer.headers) c.header(name, answer.headers[name]);
  return c.json(answer.body, answer.status as ContentfulStatusCode);
}

/** Zod's issues as the field list of a `validation_failed` answer; an unknown field is named by its own path. */
export function validationIssues(error: z.ZodError, target: string): FieldIssue[] {
  const at = (path: PropertyKey[]) => (path.length ? path.map(String).join('.') : target);
  return error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys'
      ? i.keys.map((key) => ({ path: at([...i.path, key]), message: 'is not a field of this request' }))
      : [{ path: at(i.path), message: i.message }],
  );
}

/**
 * The `defaultHook` of every OpenAPI app: what a route's schema refused, or what the platform's input rules refuse
 * in what it accepted, as one 400 whose message names the first field and whose details list every issue.
 */
export function refuseInvalidInput(
  result: { success: true; target: string; data: unknown } | { success: false; target: string; error: z.ZodError },
  c: Context,
) {
  const issues = result.success
    ? acceptedInputIssues({ target: result.target, data: result.data, contentType: c.req.header('content-type') })
    : validationIssues(result.error, result.target);
  const [first] = issues;
  if (!first) return;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more in details.issues)` : '';
  return errorResponse(c, 'validation_failed', `${first.path}: ${first.message}${more}`, { details: { issues } });
}

/**
 * The `onError` of every app. `translate` lets a service name its own exceptions as refusals
 * (the cell's fenced writer) without a second renderer.
 */
export function renderError(translate?: (err: Error) => DomainError | undefined) {
  return (err: Error, c: Context) => {
    const refusal = err instanceof DomainError ? err : translate?.(err);
    if (refusal)
      return errorResponse(c, refusal.code, refusal.message, {
        details: refusal.details,
        retryAfter: refusal.retryAfter,
      });
    if (err instanceof HTTPException) {
      if (err.status === 413) return errorResponse(c, 'payload_too_large', 'request body is too large');
      if (err.status === 415)
        return errorResponse(c, 'unsupported_media_type', 'this route does not take a body of that Content-Type', {
          details: { header: 'content-type', given: c.req.header('content-type') ?? null },
        });
      if (err.status === 401) return errorResponse(c, 'unauthenticated', err.message || 'unauthenticated');
      if (err.status < 500) return errorResponse(c, 'bad_request', err.message || 'malformed request');
    }
    if (storeUnreachable(err)) {
      (c as AnyContext).get('log')?.warn('a store is unreachable', { err, method: c.req.method, path: c.req.path });
      return errorResponse(c, 'store_unavailable', 'a data store is unreachable; retry shortly');
    }
    if (writeContended(err)) {
      (c as AnyContext).get('log')?.warn('a write kept conflicting', { err, method: c.req.method, path: c.req.path });
      return errorResponse(c, 'store_unavailable', 'the write kept conflicting with concurrent ones; retry shortly', {
        retryAfter: 1,
      });
    }
    (c as AnyContext).get('log')?.error('request failed', { err, method: c.req.method, path: c.req.path });
    return errorResponse(c, 'internal', 'internal error');
  };
}

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/**
 * kafkajs's errors for a broker that is gone, frozen or not connected yet (KafkaJSNumberOfRetriesExceeded wraps the
 * last of them as its cause, which the walk below reaches).
 */
const KAFKA_UNREACHABLE = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSGroupCoordinatorNotFound',
  'KafkaJSMetadataNotLoaded',
  'KafkaJSTopicMetadataNotLoaded',
]);

/** Messages of store clients that say "could not reach it", not "you asked wrongly". */
const UNREACHABLE_MESSAGE = new RegExp(
  [
    '^Connection (terminated|is closed)', // pg lost its socket; ioredis's connection is closed
    '^Client has encountered a connection error',
    '^timeout exceeded when trying to connect', // pg-pool: no connection within connectionTimeoutMillis
    "^Stream isn't writeable", // ioredis without an offline queue while it reconnects
    '^Command timed out', // ioredis's commandTimeout: a frozen server
    '^Broker not connected', // kafkajs: a broker dropped before the request went out
  ].join('|'),
);

/**
 * Whether an error (or what it wraps: drizzle's "Failed query" keeps pg's as its cause) says a database, Redis or
 * Kafka could not be reached, rather than that the request or the code is wrong: a socket error, PostgreSQL's
 * connection exceptions (SQLSTATE class 08, a server shutting down or starting: 57P01-57P03), pg's lost connection
 * or a pool that found no connection in time, ioredis giving up or timing out, kafkajs's connection and request
 * time-outs. The answer is then a 503 a client retries, not a 500.
 */
export function storeUnreachable(err: unknown): boolean {
  return someCause(err, (e) => {
    const code = typeof e.code === 'string' ? e.code : '';
    if (NETWORK_CODES.has(code) || code.startsWith('08') || ['57P01', '57P02', '57P03'].includes(code)) return true;
    const name = typeof e.name === 'string' ? e.name : '';
    if (name === 'MaxRetriesPerRequestError' || KAFKA_UNREACHABLE.has(name)) return true;
    return typeof e.message === 'string' && UNREACHABLE_MESSAGE.test(e.message);
  });
}

/**
 * Whether PostgreSQL kept refusing a write for its concurrency (40P01 deadlock detected, 40001 serialization failure)
 * after the writer's own retries: the database is busy, not broken, and the same request succeeds a moment later.
 */
export function writeContended(err: unknown): boolean {
  return someCause(err, (e) => e.code === '40P01' || e.code === '40001');
}

type ErrorLike = { code?: unknown; name?: unknown; message?: unknown; cause?: unknown };
function someCause(err: unknown, test: (e: ErrorLike) => boolean): boolean {
  for (let e = err as ErrorLike | undefined, depth = 0; e && depth < 5; e = e.cause as ErrorLike, depth++)
    if (test(e)) return true;
  return false;
}

/** The answer for a path no route serves: 405 with Allow when another method would, else 404. */
export function routeNotFound(allowed: (path: string) => string[]) {
  return (c: Context) => {
    const allow = allowed(c.req.path);
    if (!allow.length) return errorResponse(c, 'not_found', 'no such route');
    c.header('Allow', allow.join(', '));
    return errorResponse(c, 'method_not_allowed', `${c.req.method} is not allowed here`, { details: { allow } });
  };
}

const ERROR_DESCRIPTIONS: Partial<Record<ErrorCode, string>> = {
  bad_request: 'Malformed request',
  validation_failed: 'Invalid request; details.issues names each field',
  unauthenticated: 'Missing or invalid token',
  forbidden: 'Not allowed for this role',
  admission_invalid: 'Admission token refused',
  not_found: 'Not found (or belongs to another tenant)',
  conflict: 'Conflicts with the current state; details names what',
  order_not_releasable: 'The order has no payment to refund; details names its status',
  payload_too_large: 'Body too large',
  unsupported_media_type: 'Body in a media type this operation does not take',
  headers_too_large: 'Request line and headers too large',
  rate_limited: 'Too many requests (see Retry-After)',
  cell_unavailable: 'Unavailable; retry after Retry-After',
  store_unavailable: 'A data store is unreachable; retry after Retry-After',
  waiting_room_unavailable: 'The waiting room is being restored (Redis lost it); retry after Retry-After',
  signing_key_unavailable: 'Admission tokens cannot be signed (a signing key is unusable); retry after Retry-After',
  epoch_fenced: 'This cell writer is fenced; retry through the router',
};

/** OpenAPI responses for the given error codes: one per status, all with the one error body. */
export function errorResponses(...codes: ErrorCode[]) {
  const out: Record<number, { description: string; content: { 'application/json': { schema: typeof ErrorBody } } }> =
    {};
  for (const code of codes) {
    const status = errorCodes[code];
    const description = ERROR_DESCRIPTIONS[code] ?? code;
    out[status] = {
      description: out[status] ? `${out[status].description}; ${description}` : description,
      content: { 'application/json': { schema: ErrorBody } },
    };
  }
  return out;
}

/**
 * A service's OpenAPI document with what an operation may answer before its schemas are read, added here once rather
 * than by each route: 413 to any POST, PUT or PATCH (the body limit measures whatever is sent, a body declared or
 * not), 415 where a body is declared and another media type is sent.
 */
export function withBodyRefusals<D extends { paths?: object }>(doc: D): D {
  const [tooLarge, wrongType] = [errorResponses('payload_too_large'), errorResponses('unsupported_media_type')];
  for (const operations of Object.values(doc.paths ?? {}) as Record<string, Record<string, unknown>>[]) {
    for (const [method, operation] of Object.entries(operations)) {
      const op = operation as { requestBody?: unknown; responses?: Record<string, unknown> };
      if (!op.responses || !['post', 'put', 'patch'].includes(method)) continue;
      op.responses = { ...tooLarge, ...(op.requestBody ? wrongType : {}), ...op.responses };
    }
  }
  return doc;
}
