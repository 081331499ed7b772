import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
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
}

/**
 * How forwarding ended. `answered`: the upstream's response went (or began going) to the client. The rest are
 * failures before any response byte was sent, for the caller to answer.
 */
export type ForwardOutcome =
  | { kind: 'answered'; status: number; broken: boolean }
  | { kind: 'unreachable'; cause: string }
  | { kind: 'timeout' }
  | { kind: 'too_large' }
  | { kind: 'bad_request' }
  | { kind: 'client_gone' };

class Deadline extends Error {}
class ClientGone extends Error {}

/**
 * Sends one request to an upstream and streams its response back. One deadline covers queueing for a connection,
 * connecting and waiting for the response headers; once they arrive, a body that stalls longer than the same time
 * is cut. Nothing is retried: a hold may have committed before a connection broke, so the client retries with its
 * Idempotency-Key, which the cell makes safe.
 */
export async function forward(input: ForwardInput): Promise<ForwardOutcome> {
  const { incoming, outgoing } = input;
  const abort = new AbortController();
  const deadline = setTimeout(() => abort.abort(new Deadline()), input.timeoutMs);
  const onClose = () => {
    if (!outgoing.writableFinished) abort.abort(new ClientGone());
  };
  outgoing.once('close', onClose);

  // Bodies stream through untouched: a declared length is already under the cap (checked before forwarding) and
  // undici refuses a body that does not match it; only a chunked body, which declares nothing, is counted on the way.
  let capped: CappedBody | undefined;
  let body: Buffer | Readable | null = input.body ?? null;
  if (!body && hasBody(incoming)) {
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

  try {
    const res = await input.upstream.pool.request({
      path: input.upstream.prefix + input.path,
      method: incoming.method as 'GET',
      headers: input.headers,
      body,
      signal: abort.signal,
      bodyTimeout: input.timeoutMs,
    });
    clearTimeout(deadline);
    outgoing.writeHead(res.statusCode, clientResponseHeaders(res.headers, input.correlationId));
    // Plain pipe, not stream.pipeline: pipeline builds and aborts an AbortSignal per call, a measurable cost here.
    const broken = await new Promise<boolean>((resolve) => {
      res.body.once('error', () => {
        outgoing.destroy();
        resolve(true);
      });
      outgoing.once('close', () => {
        if (outgoing.writableFinished) return;
        res.body.destroy();
        resolve(true);
      });
      outgoing.once('finish', () => resolve(false));
      res.body.pipe(outgoing);
    });
    return { kind: 'answered', status: res.statusCode, broken };
  } catch (err) {
    if (capped?.exceeded) return { kind: 'too_large' };
    const reason = abort.signal.reason;
    if (reason instanceof ClientGone || outgoing.destroyed) return { kind: 'client_gone' };
    if (reason instanceof Deadline) return { kind: 'timeout' };
    const code = errorCode(err);
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return { kind: 'timeout' };
    if (code === 'UND_ERR_REQ_CONTENT_LENGTH_MISMATCH') return { kind: 'bad_request' };
    // Refused, reset, closed mid-request, DNS: the cell is not answering.
    return { kind: 'unreachable', cause: code ?? 'unknown' };
  } finally {
    clearTimeout(deadline);
    outgoing.off('close', onClose);
  }
}

function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown } } | undefined;
  const code = e?.code ?? e?.cause?.code;
  return typeof code === 'string' ? code : undefined;
}
