import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { ERROR_CODE_HEADER, type ErrorCode } from '@onsale/contracts';
import type { Dispatcher } from 'undici';
import { CappedBody, declaredLength, hasBody } from './body';
import { clientResponseHeaders, type HeaderMap } from './headers';
import type { Upstream } from './upstreams';

export interface ForwardInput {
  upstream: Upstream;
  /** Path and query as the upstream expects them, without the upstream's base path. */
  path: string;
  incoming: IncomingMessage;
  outgoing: ServerResponse;
  headers: HeaderMap;
  /** Raw bytes already read (webhooks); otherwise the incoming body is streamed through the cap. */
  body?: Buffer;
  maxBodyBytes: number;
  timeoutMs: number;
  correlationId: string;
  /**
   * A 404 that says the upstream has no such resource (not one that says it has it, but not ready) is not passed on
   * but reported as `not_here`, for the caller to ask the next cell on an order's trail.
   */
  askElsewhereOn404?: boolean;
}

/**
 * How forwarding ended. `answered`: the upstream's response went (or began going) to the client. The rest are
 * failures before any response byte was sent, for the caller to answer.
 */
export type ForwardOutcome =
  /** `waitedMs`: from the dispatch to the upstream's response head, the part of the exchange that is the upstream's. */
  | { kind: 'answered'; status: number; broken: boolean; waitedMs: number }
  | { kind: 'not_here' }
  | { kind: 'unreachable'; cause: string }
  | { kind: 'timeout' }
  | { kind: 'too_large' }
  | { kind: 'bad_request' }
  /** The client stopped sending its body: the router was ready for more, so the wait is not the upstream's. */
  | { kind: 'client_timeout' }
  | { kind: 'client_gone' };

/** The codes of a 404 that means "not in this cell", as opposed to "here, but not yet" (tickets not issued). */
const NOT_HERE = new Set<string>(['not_found', 'event_not_found'] satisfies ErrorCode[]);

class Deadline extends Error {}
class ClientGone extends Error {}

/**
 * Sends one request to an upstream and streams its response back. One deadline covers queueing for a connection,
 * connecting and waiting for the response headers; once they arrive, a body that stalls longer than the same time
 * is cut. A small body read whole before sending has the same time to arrive, and the upstream's deadline starts
 * when it has; a deadline that finds the client's body incomplete while the router waits for it is the client's.
 * Nothing is retried: a hold may have committed before a connection broke, so the client retries with its
 * Idempotency-Key, which the cell makes safe.
 *
 * Through undici's dispatch handler, not its request(): the response's chunks go straight onto the client's socket
 * (pausing the upstream while that socket is full), with no readable body stream, pipe or AbortSignal per request.
 */
export function forward(input: ForwardInput): Promise<ForwardOutcome> {
  const { incoming, outgoing } = input;

  // Bodies stream through untouched: a declared length is already under the cap (checked before forwarding) and
  // undici refuses a body that does not match it; only a chunked body, which declares nothing, is counted on the way.
  // A small declared body (a hold's seat ids) is read whole first instead: it came with the headers anyway, and one
  // write of it costs the proxy less CPU than a stream (router/bench/proxy-cost.ts).
  let capped: CappedBody | undefined;
  let body: Buffer | Readable | null = input.body ?? null;
  const declared = declaredLength(incoming);
  const readWhole = !body && declared !== undefined && declared > 0 && declared <= READ_WHOLE_UP_TO;
  if (!body && !readWhole && hasBody(incoming)) {
    body = incoming;
    if (declaredLength(incoming) === undefined) {
      capped = new CappedBody(input.maxBodyBytes);
      body = incoming.pipe(capped);
    }
    // A client that aborts mid-body must fail the upstream request, not leave it waiting for bytes.
    const stream = body;
    incoming.once('close', () => {
      if (!incoming.complete) stream.destroy(new ClientGone());
    });
  }

  return new Promise<ForwardOutcome>((resolve) => {
    let controller: Dispatcher.DispatchController | undefined;
    /** Why the router gave up before the upstream answered, if it did. */
    let gaveUp: Deadline | ClientGone | undefined;
    let status = 0;
    /** The upstream answered 404 to a request that may be asked elsewhere: its body is dropped, nothing is sent. */
    let notHere = false;
    let dispatchedAt = 0;
    let waitedMs = 0;
    // Resolving twice is a no-op, and so are clearing the timer and dropping the listener again.
    const settle = (outcome: ForwardOutcome) => {
      clearTimeout(deadline);
      outgoing.off('close', onClose);
      resolve(outcome);
    };
    /** Before the answer began, the caller answers in its place; once it began, only a cut connection is left. */
    const giveUp = (reason: Deadline | ClientGone) => {
      gaveUp = reason;
      // Settled before the abort: the failure the abort reports must not decide whose fault the deadline was.
      if (status) settle({ kind: 'answered', status, broken: true, waitedMs });
      else if (reason instanceof ClientGone) settle({ kind: 'client_gone' });
      else settle(awaitingClient(incoming) ? { kind: 'client_timeout' } : { kind: 'timeout' });
      // A request still queued for a connection has no controller yet: it is aborted the moment it gets one.
      controller?.abort(reason);
    };
    const onDeadline = () => {
      if (!status) giveUp(new Deadline());
    };
    let deadline = setTimeout(onDeadline, input.timeoutMs);
    const onClose = () => {
      if (!outgoing.writableFinished) giveUp(new ClientGone());
    };
    outgoing.once('close', onClose);

    const options: Dispatcher.DispatchOptions = {
      path: input.upstream.prefix + input.path,
      method: incoming.method as Dispatcher.HttpMethod,
      headers: input.headers,
      bodyTimeout: input.timeoutMs,
    };
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart(c) {
        controller = c;
        if (gaveUp) c.abort(gaveUp);
      },
      onResponseStart(_c, statusCode, headers) {
        // 1xx interim answers are the upstream's business with this hop; past the deadline the client has its 504.
        if (statusCode < 200 || gaveUp) return;
        clearTimeout(deadline);
        if (statusCode === 404 && input.askElsewhereOn404 && NOT_HERE.has(String(headers[ERROR_CODE_HEADER]))) {
          notHere = true;
          return;
        }
        status = statusCode;
        waitedMs = performance.now() - dispatchedAt;
        outgoing.writeHead(statusCode, clientResponseHeaders(headers, input.correlationId));
      },
      onResponseData(c, chunk) {
        if (notHere || gaveUp || outgoing.write(chunk)) return;
        c.pause();
        outgoing.once('drain', () => c.resume());
      },
      onResponseEnd() {
        if (notHere) return settle({ kind: 'not_here' });
        if (gaveUp) return;
        outgoing.end();
        settle({ kind: 'answered', status, broken: false, waitedMs });
      },
      onResponseError(_c, err) {
        if (notHere) return settle({ kind: 'not_here' });
        if (status) {
          // Mid-body: the client has the status already, so the only honest signal left is a cut connection.
          outgoing.destroy();
          return settle({ kind: 'answered', status, broken: true, waitedMs });
        }
        if (capped?.exceeded) return settle({ kind: 'too_large' });
        if (gaveUp || outgoing.destroyed)
          return settle({ kind: gaveUp instanceof Deadline ? 'timeout' : 'client_gone' });
        const code = errorCode(err);
        if (code === 'UND_ERR_HEADERS_TIMEOUT') return settle({ kind: 'timeout' });
        if (code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH') return settle({ kind: 'bad_request' });
        // Refused, reset, closed mid-request, DNS: the cell is not answering.
        settle({ kind: 'unreachable', cause: code ?? 'unknown' });
      },
    };
    const dispatch = (requestBody: Dispatcher.DispatchOptions['body']) => {
      try {
        dispatchedAt = performance.now();
        options.body = requestBody;
        input.upstream.pool.dispatch(options, handler);
      } catch (err) {
        settle({ kind: 'unreachable', cause: errorCode(err) ?? 'unknown' });
      }
    };
    if (!readWhole) return dispatch(body);
    // A client that stalls or leaves mid-body is the deadline's or onClose's: nothing was sent upstream.
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.once('end', () => {
      if (gaveUp) return;
      clearTimeout(deadline);
      deadline = setTimeout(onDeadline, input.timeoutMs);
      dispatch(Buffer.concat(chunks));
    });
  });
}

/**
 * Whether the client owes the router body bytes the router is ready to take: the body is incomplete and flowing
 * (read whole, or streamed to an upstream that is taking it). A paused body is held back by the upstream, and one
 * not yet flowing waits for a connection to it: those waits are the upstream's.
 */
function awaitingClient(incoming: IncomingMessage): boolean {
  return !incoming.complete && incoming.readableFlowing === true && !incoming.isPaused();
}

/** Declared bodies up to this size are read whole before the upstream request starts. */
const READ_WHOLE_UP_TO = 16 * 1024;

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}
