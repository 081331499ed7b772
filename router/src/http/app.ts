import { randomUUID } from 'node:crypto';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import type { VerifyAdmission } from '@onsale/contracts';
import { currentTraceparent, errorResponse, type Logger, methodsByPath, SpanKind, withSpan } from '@onsale/contracts';
import { type Context, Hono } from 'hono';
import type { RouterConfig } from '../config';
import type { Directory } from '../directory/directory';
import type { RouterMetrics } from '../metrics/metrics';
import { declaredLength, readCapped } from '../proxy/body';
import { forward } from '../proxy/forward';
import { upstreamRequestHeaders } from '../proxy/headers';
import type { Upstream, Upstreams } from '../proxy/upstreams';
import { classify } from '../routing/classify';
import { type CellRoute, routeToCell, routeWebhook } from '../routing/rule';
import type { RouterEnv } from './env';
import { routerDocument } from './openapi';

export interface RouterDeps {
  config: RouterConfig;
  directory: Directory;
  verifyAdmission: VerifyAdmission;
  upstreams: Upstreams;
  controlPlane: Upstream;
  metrics: RouterMetrics;
  log: Logger;
}

const CORRELATION_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const CONTROL_PLANE = 'control-plane';

/**
 * The router's HTTP surface: its own /healthz, /readyz and /metrics, and everything else forwarded to a cell or
 * the control plane. Forwarded responses are streamed straight onto the Node response (no Response object in
 * between); the answers the router makes itself go through Hono.
 */
export function createRouterApp(deps: RouterDeps) {
  const { config, directory, metrics, log } = deps;
  const app = new Hono<RouterEnv>();
  const retryAfter = config.RETRY_AFTER_SECONDS;

  app.use(async (c, next) => {
    const started = performance.now();
    const { incoming, outgoing } = c.env;
    const requestId = randomUUID();
    const given = incoming.headers['x-correlation-id'];
    const correlationId = typeof given === 'string' && CORRELATION_ID.test(given) ? given : requestId;
    c.set('requestId', requestId);
    c.set('correlationId', correlationId);
    c.set('upstream', 'none');
    c.header('X-Request-Id', requestId);
    c.header('X-Correlation-Id', correlationId);
    // Counted when the response is over (streamed bodies included); 499 when the client left before any answer.
    outgoing.once('close', () => {
      const status = outgoing.headersSent ? outgoing.statusCode : 499;
      const ms = performance.now() - started;
      metrics.observe(c.get('upstream'), status, ms / 1000);
      log.info('request', {
        requestId,
        correlationId,
        method: incoming.method,
        path: incoming.url?.split('?')[0],
        upstream: c.get('upstream'),
        status,
        ms: Math.round(ms),
      });
    });
    await next();
  });

  app.onError((err, c) => {
    log.error('request failed', { requestId: c.get('requestId'), err });
    return errorResponse(c, 'internal', 'internal error');
  });

  app.get('/healthz', (c) => {
    c.set('upstream', 'router');
    return c.json({ status: 'ok' });
  });
  app.get('/readyz', (c) => {
    c.set('upstream', 'router');
    const dir = directory.current;
    return dir
      ? c.json({ status: 'ready', directoryVersion: dir.version })
      : errorResponse(c, 'cell_unavailable', 'the directory is not loaded yet', {
          details: { status: 'directory_unavailable' },
          retryAfter,
        });
  });
  app.get('/metrics', (c) => {
    c.set('upstream', 'router');
    const dir = directory.current;
    const body = metrics.render(dir && { version: dir.version, ageSeconds: (Date.now() - dir.fetchedAt) / 1000 });
    return c.body(body, 200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8' });
  });

  const document = routerDocument(config);
  app.get('/openapi.json', (c) => {
    c.set('upstream', 'router');
    return c.json(document);
  });
  // Registered before the catch-all below, so these are exactly the router's own endpoints.
  const ownMethods = methodsByPath([...app.routes]);

  app.all('*', async (c) => {
    const { incoming } = c.env;
    const url = incoming.url ?? '/';
    const q = url.indexOf('?');
    const pathname = q === -1 ? url : url.slice(0, q);
    const allow = ownMethods(pathname);
    if (allow.length) {
      c.set('upstream', 'router');
      c.header('Allow', allow.join(', '));
      return errorResponse(c, 'method_not_allowed', `${incoming.method} is not allowed here`, { details: { allow } });
    }
    const target = classify(pathname);
    if (target.kind === 'unknown') return errorResponse(c, 'not_found', 'no such route');
    // Refused before a byte of it is read or a connection is taken.
    if ((declaredLength(incoming) ?? 0) > config.MAX_BODY_BYTES) return tooLarge(c);
    if (target.kind === 'control-plane') {
      c.set('upstream', CONTROL_PLANE);
      return send(c, deps.controlPlane, CONTROL_PLANE, url);
    }

    const dir = directory.current;
    if (!dir)
      return errorResponse(c, 'cell_unavailable', 'the directory is not loaded yet', {
        details: { status: 'directory_unavailable' },
        retryAfter,
      });

    if (target.kind === 'webhook') {
      if (incoming.method !== 'POST') return errorResponse(c, 'not_found', 'no such route');
      const route = routeWebhook(dir, target.cellId);
      if (!route.ok) return refuse(c, route);
      c.set('upstream', route.cell.id);
      // Buffered on purpose: Stripe signs the exact bytes, and they go on exactly as they came.
      const raw = await readCapped(incoming, config.MAX_BODY_BYTES);
      if (!raw) return tooLarge(c);
      return send(c, deps.upstreams.for(route.cell.baseUrl), route.cell.id, target.upstreamPath + query(url), raw);
    }

    const token = incoming.headers['x-admission-token'];
    let claims: Parameters<typeof routeToCell>[2];
    if (typeof token === 'string' && token !== '') {
      const verdict = await deps.verifyAdmission(token);
      if (!verdict.ok && verdict.reason === 'invalid')
        return errorResponse(c, 'admission_invalid', 'the admission token is not valid', {
          details: { reason: 'signature_or_expiry' },
        });
      if (!verdict.ok)
        return errorResponse(c, 'cell_unavailable', 'admission checks are unavailable; retry shortly', {
          details: { status: 'admission_keys_unavailable' },
          retryAfter,
        });
      claims = verdict.claims;
    }
    const intent = incoming.method === 'POST' && NEW_HOLD_PATH.test(pathname) ? 'new_hold' : 'order';
    const route = routeToCell(dir, target.eventId, claims, intent);
    if (!route.ok) return refuse(c, route);
    c.set('upstream', route.cell.id);
    return send(c, deps.upstreams.for(route.cell.baseUrl), route.cell.id, url);
  });

  function refuse(c: Context<RouterEnv>, route: Extract<CellRoute, { ok: false }>) {
    if (route.code === 'event_moving')
      return errorResponse(c, route.code, route.message, { details: route.details, retryAfter: movingRetryAfter });
    if (route.code !== 'cell_unavailable')
      return errorResponse(c, route.code, route.message, { details: route.details });
    // Counted against the cell, so its 5xx rate shows it is out of service.
    c.set('upstream', route.details.cellId);
    return errorResponse(c, route.code, route.message, { details: route.details, retryAfter });
  }

  function tooLarge(c: Context<RouterEnv>) {
    return errorResponse(c, 'payload_too_large', `request body exceeds ${config.MAX_BODY_BYTES} bytes`);
  }

  async function send(c: Context<RouterEnv>, upstream: Upstream, label: string, path: string, body?: Buffer) {
    const { incoming, outgoing } = c.env;
    const correlationId = c.get('correlationId');
    const headers = upstreamRequestHeaders(incoming, { correlationId, trustProxy: config.TRUST_PROXY });
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
          maxBodyBytes: config.MAX_BODY_BYTES,
          timeoutMs: config.UPSTREAM_TIMEOUT_MS,
          correlationId,
        });
      },
    );
    switch (outcome.kind) {
      case 'answered':
        if (outcome.broken) metrics.upstreamError(label, 'broken');
        return RESPONSE_ALREADY_SENT;
      case 'client_gone':
        return RESPONSE_ALREADY_SENT;
      case 'too_large':
        return tooLarge(c);
      case 'bad_request':
        return errorResponse(c, 'bad_request', 'the request body does not match its Content-Length');
      case 'timeout':
        metrics.upstreamError(label, 'timeout');
        return errorResponse(c, 'upstream_timeout', `no answer within ${config.UPSTREAM_TIMEOUT_MS} ms`, {
          details: { cellId: label },
        });
      case 'unreachable':
        metrics.upstreamError(label, 'unreachable');
        log.warn('upstream unreachable', { requestId: c.get('requestId'), upstream: label, cause: outcome.cause });
        return errorResponse(c, 'cell_unavailable', 'the cell is not answering', {
          details: { cellId: label, status: 'unreachable' },
          retryAfter,
        });
    }
  }

  return app;
}

/** A new hold (POST to the collection), as opposed to releasing one (DELETE /holds/{id}) or reading an order. */
const NEW_HOLD_PATH = /^\/events\/[^/]+\/holds\/?$/;
/** A move pauses new holds for seconds: buyers come back soon. */
const movingRetryAfter = 1;

const query = (url: string) => {
  const q = url.indexOf('?');
  return q === -1 ? '' : url.slice(q);
};
