import type { RequestListener } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { RouterMetrics, VerifyAdmission } from '@onsale/contracts';
import { currentTraceparent, type Logger, SpanKind, withSpan } from '@onsale/contracts';
import type { RouterConfig } from '../config';
import type { Directory } from '../directory/directory';
import { declaredLength, hasBody, readCapped } from '../proxy/body';
import { type ForwardOutcome, forward } from '../proxy/forward';
import { upstreamRequestHeaders } from '../proxy/headers';
import type { Upstream, Upstreams } from '../proxy/upstreams';
import { classify } from '../routing/classify';
import { type CellRoute, orderTrail, routeToCell, routeWebhook } from '../routing/rule';
import { createProofOfPossession } from './device-binding';
import { answerError, beginExchange, type Exchange } from './exchange';
import { createOwnEndpoints } from './own-endpoints';

export interface RouterDeps {
  config: RouterConfig;
  directory: Directory;
  verifyAdmission: VerifyAdmission;
  upstreams: Upstreams;
  controlPlane: Upstream;
  metrics: RouterMetrics;
  log: Logger;
}

const CONTROL_PLANE = 'control-plane';

/**
 * The router's front door: its own endpoints (own-endpoints.ts) on Hono, everything else forwarded to a cell or the
 * control plane by the rule, or refused in the platform's one error body. The forwarding path works on the Node
 * request and response themselves (no Request, Response or framework context per request): a proxy's cost is what
 * it adds to every hold, and the upstream's answer is streamed straight through.
 */
export function createRouterApp(deps: RouterDeps): RequestListener {
  const { config, directory, metrics, log } = deps;
  const own = createOwnEndpoints(deps);
  const serveOwn = getRequestListener(own.app.fetch);
  const retryAfter = config.RETRY_AFTER_SECONDS;
  const possession = createProofOfPossession(metrics);

  return (incoming, outgoing) => {
    const url = incoming.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    if (own.serves(pathname)) return serveOwn(incoming, outgoing);
    const x = beginExchange(incoming, outgoing, metrics, log);
    routeAndForward(x, url, pathname).catch((err) => {
      log.error('request failed', { requestId: x.requestId, err });
      if (outgoing.headersSent) outgoing.destroy();
      else answerError(x, 'internal', 'internal error');
    });
  };

  async function routeAndForward(x: Exchange, url: string, pathname: string): Promise<void> {
    const { incoming } = x;
    const target = classify(pathname);
    if (target.kind === 'malformed')
      return answerError(x, 'bad_request', 'the path is not in its plain form', {
        details: { path: pathname, reason: target.fault },
      });
    if (target.kind === 'unknown') return answerError(x, 'not_found', 'no such route');
    const maxBodyBytes =
      target.kind === 'control-plane' && target.upload ? config.MAX_UPLOAD_BODY_BYTES : config.MAX_BODY_BYTES;
    // Refused before a byte of it is read or a connection is taken.
    if ((declaredLength(incoming) ?? 0) > maxBodyBytes) return tooLarge(x, maxBodyBytes);
    if (target.kind === 'control-plane') {
      x.upstream = CONTROL_PLANE;
      await send(x, deps.controlPlane, url, { maxBodyBytes });
      return;
    }

    const dir = directory.current;
    if (!dir)
      return answerError(x, 'cell_unavailable', 'the directory is not loaded yet', {
        details: { status: 'directory_unavailable' },
        retryAfter,
      });

    if (target.kind === 'webhook') {
      if (incoming.method !== 'POST') return answerError(x, 'not_found', 'no such route');
      const route = routeWebhook(dir, target.cellId);
      if (!route.ok) return refuse(x, route);
      x.upstream = route.cell.id;
      // Buffered on purpose: Stripe signs the exact bytes, and they go on exactly as they came.
      const raw = await readCapped(incoming, maxBodyBytes);
      if (!raw) return tooLarge(x, maxBodyBytes);
      await send(x, deps.upstreams.for(route.cell.baseUrl), target.upstreamPath + query(url), {
        maxBodyBytes,
        body: raw,
      });
      return;
    }

    const token = incoming.headers['x-admission-token'];
    let claims: Parameters<typeof routeToCell>[2];
    if (typeof token === 'string' && token !== '') {
      const verdict = await deps.verifyAdmission(token);
      if (!verdict.ok && verdict.reason === 'invalid')
        return answerError(x, 'admission_invalid', 'the admission token is not valid', {
          details: { reason: 'signature_or_expiry' },
        });
      if (!verdict.ok)
        return answerError(x, 'cell_unavailable', 'admission checks are unavailable; retry shortly', {
          details: { status: 'admission_keys_unavailable' },
          retryAfter,
        });
      claims = verdict.claims;
      const refusal = claims.cnf ? possession(incoming, pathname, token, claims.cnf.jkt) : null;
      if (refusal)
        return answerError(
          x,
          'admission_invalid',
          "the request does not prove possession of the admission token's device key (DPoP)",
          {
            details: { reason: refusal },
          },
        );
    }
    const intent = incoming.method === 'POST' && NEW_HOLD_PATH.test(pathname) ? 'new_hold' : 'order';
    const route = routeToCell(dir, target.eventId, claims, intent);
    if (!route.ok) return refuse(x, route);
    if (intent === 'new_hold' || hasBody(incoming) || !ORDER_PATH.test(pathname)) {
      x.upstream = route.cell.id;
      await send(x, deps.upstreams.for(route.cell.baseUrl), url, { maxBodyBytes });
      return;
    }
    // An order lives where it was taken: a cell that answers 404 passes the request down the event's trail.
    const trail = [route, ...orderTrail(dir, target.eventId, route.cell.id)];
    for (const [i, hop] of trail.entries()) {
      if (!hop.ok) return refuse(x, hop);
      x.upstream = hop.cell.id;
      const last = i === trail.length - 1;
      if (await send(x, deps.upstreams.for(hop.cell.baseUrl), url, { maxBodyBytes, askElsewhereOn404: !last })) return;
    }
  }

  function refuse(x: Exchange, route: Extract<CellRoute, { ok: false }>) {
    if (route.code === 'event_moving')
      return answerError(x, route.code, route.message, { details: route.details, retryAfter: movingRetryAfter });
    if (route.code !== 'cell_unavailable') return answerError(x, route.code, route.message, { details: route.details });
    // Counted against the cell, so its 5xx rate shows it is out of service; a cell the directory does not list is no
    // label (its id may come from a client), so the series stay as few as the directory's cells.
    if (route.details.status !== 'unknown') x.upstream = route.details.cellId;
    return answerError(x, route.code, route.message, { details: route.details, retryAfter });
  }

  function tooLarge(x: Exchange, maxBodyBytes: number) {
    return answerError(x, 'payload_too_large', `request body exceeds ${maxBodyBytes} bytes`);
  }

  /**
   * Forwards to the upstream `x.upstream` names, or answers for it when it could not. Returns false only when the
   * upstream answered 404 and `askElsewhereOn404` asked for the chance to try another cell (nothing was sent).
   * A body is streamed, up to `maxBodyBytes` (the path's limit), unless it was read already (`body`).
   */
  async function send(
    x: Exchange,
    upstream: Upstream,
    path: string,
    {
      maxBodyBytes,
      body,
      askElsewhereOn404 = false,
    }: { maxBodyBytes: number; body?: Buffer; askElsewhereOn404?: boolean },
  ): Promise<boolean> {
    const { incoming, outgoing, correlationId } = x;
    const label = x.upstream;
    const headers = upstreamRequestHeaders(incoming, {
      correlationId,
      trustProxy: config.TRUST_PROXY,
      trustedHops: config.TRUSTED_PROXY_HOPS,
    });
    if (body) headers['content-length'] = String(body.length);
    // The router's span, child of the client's traceparent if any; the upstream continues it.
    const outcome = await withSpan(
      `router.forward ${label}`,
      {
        kind: SpanKind.CLIENT,
        parent: typeof incoming.headers.traceparent === 'string' ? incoming.headers.traceparent : null,
        attributes: { 'http.request.method': incoming.method ?? '', 'onsale.upstream': label },
      },
      () => {
        const traceparent = currentTraceparent();
        if (traceparent) headers.traceparent = traceparent;
        return forward({
          upstream,
          path,
          incoming,
          outgoing,
          headers,
          body,
          maxBodyBytes,
          timeoutMs: config.UPSTREAM_TIMEOUT_MS,
          correlationId,
          askElsewhereOn404,
        });
      },
    );
    if (outcome.kind === 'not_here') return false;
    answerFor(x, label, outcome, maxBodyBytes);
    return true;
  }

  /** Records how forwarding ended, and answers the client in the upstream's place when it did not. */
  function answerFor(
    x: Exchange,
    label: string,
    outcome: Exclude<ForwardOutcome, { kind: 'not_here' }>,
    maxBodyBytes: number,
  ) {
    switch (outcome.kind) {
      case 'answered':
        if (outcome.broken) metrics.upstreamError(label, 'broken');
        else metrics.observeOwn(label, (performance.now() - x.started - outcome.waitedMs) / 1000);
        return;
      case 'client_gone':
        return;
      case 'too_large':
        return tooLarge(x, maxBodyBytes);
      case 'bad_request':
        return answerError(x, 'bad_request', 'the request body does not match its Content-Length');
      case 'client_timeout':
        // The rest of the body may still come: the connection cannot carry another request.
        x.outgoing.setHeader('connection', 'close');
        return answerError(x, 'request_timeout', `no request body within ${config.UPSTREAM_TIMEOUT_MS} ms`);
      case 'timeout':
        metrics.upstreamError(label, 'timeout');
        return answerError(x, 'upstream_timeout', `no answer within ${config.UPSTREAM_TIMEOUT_MS} ms`, {
          details: { cellId: label },
        });
      case 'unreachable':
        metrics.upstreamError(label, 'unreachable');
        log.warn('upstream unreachable', { requestId: x.requestId, upstream: label, cause: outcome.cause });
        return answerError(x, 'cell_unavailable', 'the cell is not answering', {
          details: { cellId: label, status: 'unreachable' },
          retryAfter,
        });
    }
  }
}

/** A new hold (POST to the collection), as opposed to releasing one (DELETE /holds/{id}) or reading an order. */
const NEW_HOLD_PATH = /^\/events\/[^/]+\/holds$/;
/** An order and what hangs off it (its tickets, its hold): it lives in the cell that took it. */
const ORDER_PATH = /^\/events\/[^/]+\/orders\/[^/]+/;
/** A move pauses new holds for seconds: buyers come back soon. */
const movingRetryAfter = 1;

const query = (url: string) => {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q);
};
