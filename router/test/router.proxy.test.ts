import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { onSocket } from '../../test/support/raw-http';
import type { RunningRouter } from '../src/router';
import {
  type FakeControlPlane,
  metricValue,
  type Recorded,
  routerFor,
  routerMetricsText,
  startFakeControlPlane,
  startFakeServer,
} from './fakes';

/**
 * Forwarding mechanics against fake upstreams, where the test controls and records the far side: an echo cell, a
 * cell slower than the time-out, and the control plane.
 */
const TIMEOUT_MS = 400;
const MAX_BODY = 4096;
const MAX_UPLOAD = 64 * 1024;

let identity: TestIdentity;
let controlPlane: FakeControlPlane;
let echo: Awaited<ReturnType<typeof startFakeServer>>;
let slow: Awaited<ReturnType<typeof startFakeServer>>;
let big: Awaited<ReturnType<typeof startFakeServer>>;
let lagging: Awaited<ReturnType<typeof startFakeServer>>;
let router: RunningRouter;
const echoEvent = randomUUID();
const slowEvent = randomUUID();
const bigEvent = randomUUID();
const laggingEvent = randomUUID();
/** How long the lagging cell thinks before answering: well inside the time-out. */
const LAG_MS = 150;
/** A response far larger than the sockets' buffers, in chunks; `?cut` stops half way and resets the connection. */
const BIG = randomBytes(8 * 1024 * 1024);

beforeAll(async () => {
  identity = await startIdentity();
  echo = await startFakeServer((req, res) => {
    res
      .writeHead(200, {
        'content-type': 'application/json',
        connection: 'keep-alive, X-Upstream-Hop',
        'x-upstream-hop': 'must-not-leak',
        'keep-alive': 'timeout=99, max=7',
        'proxy-authenticate': 'Basic realm="cell"',
        trailer: 'X-Never',
        'x-end-to-end': 'kept',
      })
      .end(JSON.stringify({ url: req.url }));
  });
  slow = await startFakeServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, TIMEOUT_MS * 5));
    if (!res.destroyed) res.writeHead(200).end('late');
  });
  big = await startFakeServer(async (req, res) => {
    const cut = req.url.endsWith('?cut');
    res.writeHead(200, {
      'content-type': 'application/octet-stream',
      ...(cut ? {} : { 'content-length': BIG.length }),
    });
    for (let at = 0; at < BIG.length; at += 64 * 1024) {
      if (cut && at >= BIG.length / 2) return void res.socket?.destroy();
      if (!res.write(BIG.subarray(at, at + 64 * 1024))) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  });
  lagging = await startFakeServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, LAG_MS));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  controlPlane = await startFakeControlPlane();
  controlPlane.addCell('cell-lagging', lagging.url);
  controlPlane.placeEvent(laggingEvent, 'cell-lagging');
  controlPlane.addCell('cell-big', big.url);
  controlPlane.placeEvent(bigEvent, 'cell-big');
  controlPlane.addCell('cell-echo', echo.url);
  controlPlane.addCell('cell-slow', slow.url);
  controlPlane.placeEvent(echoEvent, 'cell-echo');
  controlPlane.placeEvent(slowEvent, 'cell-slow');
  router = await routerFor(controlPlane, identity.admissionJwksUrl, {
    UPSTREAM_TIMEOUT_MS: String(TIMEOUT_MS),
    MAX_BODY_BYTES: String(MAX_BODY),
    MAX_UPLOAD_BODY_BYTES: String(MAX_UPLOAD),
  });
});

afterAll(async () => {
  await router?.close();
  await Promise.all([controlPlane?.close(), echo?.close(), slow?.close(), big?.close(), lagging?.close()]);
  await identity?.close();
});

const lastAt = (server: { requests: Recorded[] }): Recorded => server.requests.at(-1)!;

/** node:http, because fetch will not send hop-by-hop headers nor expose the ones it receives unfiltered. */
function rawRequest(
  path: string,
  opts: { method?: string; headers?: Record<string, string>; chunks?: Buffer[] } = {},
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${router.url}${path}`, { method: opts.method ?? 'GET', headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString() }),
      );
    });
    req.on('error', reject);
    for (const chunk of opts.chunks ?? []) req.write(chunk);
    req.end();
  });
}

/** The control plane's requests other than the router's own directory polls: what the router forwarded to it. */
const forwardedToControlPlane = () => controlPlane.requests.filter((r) => r.url !== '/directory').length;

/**
 * A request written byte for byte on a socket: `head` is the request line and headers without the blank line; `body`
 * goes after it, whatever the head declared. Resolves with the answer once the router closes the connection
 * (`Connection: close` is sent unless the head says otherwise).
 */
function onRouterSocket(head: string, body = '') {
  const close = /\r\nconnection:/i.test(head) ? '' : '\r\nConnection: close';
  return onSocket(Number(new URL(router.url).port), `${head}\r\nHost: edge${close}\r\n\r\n${body}`);
}

describe('forwarding', () => {
  it('strips hop-by-hop headers in both directions and keeps end-to-end ones', async () => {
    const res = await rawRequest(`/events/${echoEvent}/availability?x=1`, {
      headers: {
        connection: 'keep-alive, X-Client-Hop',
        'x-client-hop': 'must-not-leak',
        'keep-alive': 'timeout=5',
        'proxy-authorization': 'Basic c2VjcmV0',
        te: 'trailers',
        upgrade: 'h2c',
        'x-end-to-end': 'kept',
      },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ url: `/events/${echoEvent}/availability?x=1` });

    const seen = lastAt(echo);
    for (const name of ['x-client-hop', 'keep-alive', 'proxy-authorization', 'te', 'upgrade'])
      expect(seen.headers[name], name).toBeUndefined();
    expect(seen.headers.connection ?? '').not.toMatch(/x-client-hop/i);
    expect(seen.headers['x-end-to-end']).toBe('kept');

    for (const name of ['x-upstream-hop', 'proxy-authenticate', 'trailer'])
      expect(res.headers[name], name).toBeUndefined();
    expect(String(res.headers.connection ?? '')).not.toMatch(/x-upstream-hop/i);
    expect(String(res.headers['keep-alive'] ?? '')).not.toMatch(/max=7/);
    expect(res.headers['x-end-to-end']).toBe('kept');
  });

  it('creates a correlation id when absent, forwards a given one, and adds X-Forwarded-*', async () => {
    const created = await rawRequest(`/events/${echoEvent}/availability`, {
      headers: { 'x-forwarded-for': '6.6.6.6' },
    });
    const minted = lastAt(echo).headers;
    expect(minted['x-correlation-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(created.headers['x-correlation-id']).toBe(minted['x-correlation-id']);
    // The router does not trust the client's chain unless TRUST_PROXY says a trusted hop is in front.
    expect(minted['x-forwarded-for']).toBe('127.0.0.1');
    expect(minted['x-forwarded-proto']).toBe('http');

    const given = await rawRequest(`/events/${echoEvent}/availability`, { headers: { 'x-correlation-id': 'corr-42' } });
    expect(lastAt(echo).headers['x-correlation-id']).toBe('corr-42');
    expect(given.headers['x-correlation-id']).toBe('corr-42');
  });

  it("asks the cells for the buyer's orders under the request's correlation id", async () => {
    const res = await rawRequest('/me/orders', {
      headers: { authorization: 'Bearer a-buyer', 'x-correlation-id': 'corr-mine' },
    });
    expect(res.headers['x-correlation-id']).toBe('corr-mine');
    const asked = echo.requests.filter((r) => r.url.endsWith('/me/orders'));
    expect(asked.at(-1)?.headers['x-correlation-id']).toBe('corr-mine');
  });

  it('behind trusted proxies, keeps only the X-Forwarded-For entries they appended, none the client wrote', async () => {
    // CloudFront appends the viewer (203.0.113.7), the load balancer CloudFront (198.51.100.2); before them, the
    // client's own entries, which would otherwise be the first one the control plane's per-IP limits read.
    const behind = await routerFor(controlPlane, identity.admissionJwksUrl, { TRUST_PROXY: 'true' });
    try {
      for (const [sent, kept] of [
        ['6.6.6.6, 7.7.7.7, 203.0.113.7, 198.51.100.2', '203.0.113.7, 198.51.100.2, 127.0.0.1'],
        ['203.0.113.7, 198.51.100.2', '203.0.113.7, 198.51.100.2, 127.0.0.1'],
        ['198.51.100.2', '198.51.100.2, 127.0.0.1'],
      ]) {
        const res = await fetch(`${behind.url}/events/${echoEvent}/availability`, {
          headers: { 'x-forwarded-for': sent!, 'x-forwarded-proto': 'https' },
        });
        expect(res.status).toBe(200);
        expect(lastAt(echo).headers['x-forwarded-for'], sent).toBe(kept);
        expect(lastAt(echo).headers['x-forwarded-proto']).toBe('https');
      }
    } finally {
      await behind.close();
    }
  });

  it("counts its own time apart from the cell's: a cell that thinks for a while does not make the router look slow", async () => {
    for (let i = 0; i < 3; i++)
      expect((await fetch(`${router.url}/events/${laggingEvent}/availability`)).status).toBe(200);
    const total = await metricValue(router, 'router_request_duration_seconds_sum{cell="cell-lagging"}');
    const own = await metricValue(router, 'router_own_duration_seconds_sum{cell="cell-lagging"}');
    expect(await metricValue(router, 'router_own_duration_seconds_count{cell="cell-lagging"}')).toBe(3);
    expect(total).toBeGreaterThanOrEqual((3 * LAG_MS) / 1000);
    // The cell's 3 x 150 ms are not the router's; what is left is the router's own work, far below one lag.
    expect(own).toBeGreaterThan(0);
    expect(own).toBeLessThan(LAG_MS / 1000);
  });

  it('answers 504 upstream_timeout when a cell is slower than UPSTREAM_TIMEOUT_MS', async () => {
    const started = performance.now();
    const res = await fetch(`${router.url}/events/${slowEvent}/availability`);
    const elapsed = performance.now() - started;
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ error: { code: 'upstream_timeout', details: { cellId: 'cell-slow' } } });
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(TIMEOUT_MS * 3);
    expect(await metricValue(router, 'router_upstream_errors_total{cell="cell-slow",reason="timeout"}')).toBe(1);
  });

  it('answers a browser loading a page with a page a person can read, which loads itself again; a script gets JSON', async () => {
    // rawRequest: fetch sends its own Sec-Fetch-Mode.
    const browser = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8', 'sec-fetch-mode': 'navigate' };
    const page = await rawRequest(`/events/${slowEvent}/availability`, { headers: browser });
    expect(page.status).toBe(504);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['x-error-code']).toBe('upstream_timeout');
    expect(page.body).toContain('<meta http-equiv="refresh" content="5">');
    expect(page.body).toContain(`Reference: ${page.headers['x-request-id']}`);
    // A form's POST is not sent again by itself, and a page that is not there is not loaded again.
    const posted = await rawRequest(`/events/${slowEvent}/holds`, { method: 'POST', headers: browser });
    expect(posted.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(posted.body).not.toContain('http-equiv="refresh"');
    const missing = await rawRequest('/no-such-page', { headers: browser });
    expect(missing.status).toBe(404);
    expect(missing.body).not.toContain('http-equiv="refresh"');
    // The page's own scripts, and every API client, get the one error body.
    for (const headers of [{ ...browser, 'sec-fetch-mode': 'cors' }, { accept: '*/*' }]) {
      const script = await rawRequest(`/events/${slowEvent}/availability`, { headers });
      expect(script.headers['content-type']).toBe('application/json');
      expect(JSON.parse(script.body)).toMatchObject({ error: { code: 'upstream_timeout' } });
    }
  });

  it('streams a large answer to a slow reader byte for byte, and cuts the client when the cell breaks mid-body', async () => {
    const whole = await new Promise<{ status: number; sha: string }>((resolve, reject) => {
      const req = request(`${router.url}/events/${bigEvent}/availability`, (res) => {
        const hash = createHash('sha256');
        // The reader stalls twice, so the router must hold the cell back instead of buffering 8 MiB.
        res.pause();
        setTimeout(() => res.resume(), 150);
        let stalled = false;
        res.on('data', (c: Buffer) => {
          hash.update(c);
          if (!stalled) {
            stalled = true;
            res.pause();
            setTimeout(() => res.resume(), 150);
          }
        });
        res.on('end', () => resolve({ status: res.statusCode!, sha: hash.digest('hex') }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end();
    });
    expect(whole).toEqual({ status: 200, sha: createHash('sha256').update(BIG).digest('hex') });

    const cut = await new Promise<{ status: number; received: number; complete: boolean }>((resolve) => {
      const req = request(`${router.url}/events/${bigEvent}/availability?cut`, (res) => {
        let received = 0;
        res.on('data', (c: Buffer) => {
          received += c.length;
        });
        const done = () => resolve({ status: res.statusCode!, received, complete: res.complete });
        res.on('end', done);
        res.on('error', done);
        res.on('aborted', done);
      });
      req.on('error', () => {});
      req.end();
    });
    expect(cut.status).toBe(200);
    expect(cut.complete).toBe(false);
    expect(cut.received).toBeLessThan(BIG.length);
    expect(await metricValue(router, 'router_upstream_errors_total{cell="cell-big",reason="broken"}')).toBe(1);
  });

  it('refuses a body over MAX_BODY_BYTES with 413, declared or chunked', async () => {
    const before = echo.requests.length;
    const declared = await rawRequest(`/events/${echoEvent}/holds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY + 1) },
      chunks: [Buffer.alloc(MAX_BODY + 1, 'a')],
    });
    expect(declared.status).toBe(413);
    expect(JSON.parse(declared.body)).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(echo.requests.length).toBe(before);

    const chunked = await rawRequest(`/events/${echoEvent}/holds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      chunks: [Buffer.alloc(MAX_BODY / 2, 'a'), Buffer.alloc(MAX_BODY / 2, 'b'), Buffer.alloc(16, 'c')],
    });
    expect(chunked.status).toBe(413);
    expect(echo.requests.length).toBe(before);

    const atCap = await rawRequest(`/events/${echoEvent}/holds`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      chunks: [Buffer.alloc(MAX_BODY, 'a')],
    });
    expect(atCap.status).toBe(200);
    expect(lastAt(echo)).toMatchObject({ method: 'POST' });
  });

  it("takes a seat map's upload up to MAX_UPLOAD_BODY_BYTES, through the API and the console, and nothing else that large", async () => {
    const upload = Buffer.alloc(MAX_UPLOAD, 'x');
    for (const [method, path] of [
      ['PUT', `/events/${echoEvent}/seat-map`],
      ['POST', `/console/events/${echoEvent}/seat-map`],
    ] as const) {
      const taken = await rawRequest(path, { method, headers: { 'content-type': 'text/csv' }, chunks: [upload] });
      expect(taken.status, path).toBe(200);
      expect(lastAt(controlPlane)).toMatchObject({ method, url: path });
      expect(lastAt(controlPlane).body.equals(upload), path).toBe(true);
      const over = await rawRequest(path, {
        method,
        headers: { 'content-type': 'text/csv' },
        chunks: [upload, Buffer.from('x')],
      });
      expect(over.status, path).toBe(413);
      expect(JSON.parse(over.body).error.message).toBe(`request body exceeds ${MAX_UPLOAD} bytes`);
    }
    const before = controlPlane.requests.length;
    for (const [method, path] of [
      ['PUT', `/events/${echoEvent}/onsale`],
      ['POST', `/console/events/${echoEvent}/presale`],
    ] as const) {
      const refused = await rawRequest(path, {
        method,
        headers: { 'content-type': 'application/json', 'content-length': String(MAX_BODY + 1) },
        chunks: [Buffer.alloc(MAX_BODY + 1, 'a')],
      });
      expect(refused.status, path).toBe(413);
      expect(JSON.parse(refused.body).error.message).toBe(`request body exceeds ${MAX_BODY} bytes`);
    }
    expect(controlPlane.requests.length).toBe(before);
  });

  it('routes waiting-room, console, sales and JWKS paths to the control plane, and nothing else', async () => {
    for (const [method, path] of [
      ['POST', `/events/${echoEvent}/queue`],
      ['GET', `/events/${echoEvent}/queue/me`],
      ['GET', '/console/events'],
      ['GET', `/events/${echoEvent}/sales/summary`],
      ['GET', '/.well-known/jwks.json'],
    ] as const) {
      const res = await fetch(`${router.url}${path}`, { method });
      expect(res.status, path).toBe(200);
      expect(await res.json()).toEqual({ servedBy: 'control-plane', method, url: path });
    }
    expect((await fetch(`${router.url}/operator/cells`)).status).toBe(404);
    expect((await fetch(`${router.url}/internal/events/${echoEvent}`, { method: 'PUT' })).status).toBe(404);
  });
});

describe('paths the router does not serve', () => {
  it("keeps the control plane's directory off the edge: every event of every tenant and each cell's address", async () => {
    const before = forwardedToControlPlane();
    const res = await fetch(`${router.url}/directory`);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
    expect(forwardedToControlPlane()).toBe(before);
  });

  it('answers a trailing slash on its own endpoints 404, not a 405 that allows the method used', async () => {
    for (const path of ['/healthz/', '/readyz/', '/openapi.json/']) {
      const res = await fetch(`${router.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('allow'), path).toBeNull();
      expect((await res.json()).error.code, path).toBe('not_found');
    }
  });
});

describe('a path the upstream would resolve otherwise than the router reads it', () => {
  const E = echoEvent;
  it.each([
    ['GET', `/events/${E}/holds/../../../internal/signals`, 'dot_segment'],
    ['GET', `/events/${E}/queue/../../../operator/tenants`, 'dot_segment'],
    ['GET', `/events/${E}/holds/%2e%2e/%2e%2e/%2e%2e/metrics`, 'dot_segment'],
    ['GET', `/events/${E}/holds/%2E%2E/%2E%2E/%2E%2E/openapi.json`, 'dot_segment'],
    ['GET', `/events/${E}/availability/.%2e/%2E./.%2E/readyz`, 'dot_segment'],
    ['GET', `/events/${E}/queue/%2e%2e/%2e%2e/%2e%2e/metrics`, 'dot_segment'],
    ['GET', `/events/${E}/holds/./x`, 'dot_segment'],
    ['GET', `/events/${E}/holds/%2e`, 'dot_segment'],
    ['DELETE', `/events/${E}/holds/..`, 'dot_segment'],
    ['GET', `/events/${E}/holds/..%2f..%2f..%2finternal%2fsignals`, 'encoded_separator'],
    ['GET', `/events/${E}/queue/..%2F..%2F..%2Foperator%2Ftenants`, 'encoded_separator'],
    ['GET', `/events/${E}/holds/..%5c..%5c..%5cinternal`, 'encoded_separator'],
    ['POST', '/cells/..%2F/webhooks/stripe', 'encoded_separator'],
    ['GET', `/events/${E}/holds\\..\\..\\..\\internal\\signals`, 'backslash'],
    ['GET', `/events/${E}/holds/x#/y`, 'not_canonical'],
    ['GET', `/events/${E}/holds/"x"`, 'not_canonical'],
  ])('%s %s is refused with 400 (%s) and reaches no upstream', async (method, path, reason) => {
    const atCell = echo.requests.length;
    const atControlPlane = forwardedToControlPlane();
    const res = await onRouterSocket(`${method} ${path} HTTP/1.1\r\nContent-Length: 2`, '{}');
    expect(res.status).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'bad_request', details: { path, reason } } });
    expect(echo.requests.length).toBe(atCell);
    expect(forwardedToControlPlane()).toBe(atControlPlane);
  });

  it('still forwards a plain path, percent-encoded characters and a query with dots untouched', async () => {
    const path = `/events/${E}/availability/x%22y?next=../../internal&dot=.`;
    const res = await onRouterSocket(`GET ${path} HTTP/1.1`);
    expect(res.status).toBe(200);
    expect(lastAt(echo).url).toBe(path);
  });
});

describe('a request the HTTP parser refuses', () => {
  it('gets the status Node gives it in the one error body, and reaches no cell', async () => {
    const atCell = echo.requests.length;
    const oversized = await onRouterSocket(
      `GET /events/${echoEvent}/availability HTTP/1.1\r\nX-Padding: ${'a'.repeat(20_000)}`,
    );
    expect(oversized.status).toBe(431);
    expect(JSON.parse(oversized.body)).toMatchObject({ error: { code: 'headers_too_large' } });
    const method = await onRouterSocket(`FOO /events/${echoEvent}/availability HTTP/1.1`);
    expect(method.status).toBe(400);
    expect(JSON.parse(method.body)).toMatchObject({
      error: { code: 'bad_request', details: { reason: 'HPE_INVALID_METHOD' } },
    });
    expect(echo.requests.length).toBe(atCell);
  });
});

describe('a client that stops sending its body', () => {
  it('gets 408 request_timeout, the cell is sent nothing and blamed for nothing', async () => {
    const atCell = echo.requests.length;
    const timeouts = () => metricValue(router, 'router_upstream_errors_total{cell="cell-echo",reason="timeout"}');
    const before = await timeouts();
    // 12 of the 100 bytes declared, then silence.
    const res = await onRouterSocket(
      `POST /events/${echoEvent}/holds HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 100`,
      '{"seatIds":[',
    );
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'request_timeout' } });
    expect(res.head).toMatch(/\r\nconnection: close/i);
    expect(res.ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(echo.requests.length).toBe(atCell);
    expect(await timeouts()).toBe(before);
  });

  it('gets 408 too when its chunked body stalls on the way to the cell', async () => {
    const atCell = echo.requests.length;
    const timeouts = () => metricValue(router, 'router_upstream_errors_total{cell="cell-echo",reason="timeout"}');
    const before = await timeouts();
    const res = await onRouterSocket(
      `POST /events/${echoEvent}/holds HTTP/1.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked`,
      'c\r\n{"seatIds":[\r\n',
    );
    expect(res.status).toBe(408);
    expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'request_timeout' } });
    // The cell had the start of it and saw the request cut; it recorded no request.
    expect(echo.requests.length).toBe(atCell);
    expect(await timeouts()).toBe(before);
  });

  it('leaves a cell that does not answer a whole body its 504', async () => {
    const res = await onRouterSocket(
      `POST /events/${slowEvent}/holds HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2`,
      '{}',
    );
    expect(res.status).toBe(504);
    expect(JSON.parse(res.body)).toMatchObject({
      error: { code: 'upstream_timeout', details: { cellId: 'cell-slow' } },
    });
  });
});

describe('Stripe webhooks', () => {
  it('pass the raw body byte for byte, with Stripe-Signature, to the named cell', async () => {
    // Not UTF-8, CRLFs, trailing spaces, a BOM: anything a re-encoding would change.
    const raw = Buffer.concat([
      Buffer.from([0xef, 0xbb, 0xbf]),
      Buffer.from('{"id":"evt_1",  "type":"payment_intent.amount_capturable_updated"}\r\n  '),
      randomBytes(512),
    ]);
    const signature = `t=${Math.floor(Date.now() / 1000)},v1=${randomBytes(32).toString('hex')}`;
    const res = await fetch(`${router.url}/cells/cell-echo/webhooks/stripe?attempt=2`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
      body: raw,
    });
    expect(res.status).toBe(200);
    const seen = lastAt(echo);
    expect(seen.url).toBe('/webhooks/stripe?attempt=2');
    expect(seen.headers['stripe-signature']).toBe(signature);
    expect(seen.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(createHash('sha256').update(seen.body).digest('hex')).toBe(createHash('sha256').update(raw).digest('hex'));
    expect(seen.body.equals(raw)).toBe(true);
  });

  it('answer 503 for a cell that is down, 404 for a GET, 413 over the cap', async () => {
    controlPlane.setStatus('cell-slow', 'down');
    await router.refreshDirectory();
    const down = await fetch(`${router.url}/cells/cell-slow/webhooks/stripe`, { method: 'POST', body: '{}' });
    controlPlane.setStatus('cell-slow', 'active');
    await router.refreshDirectory();
    expect(down.status).toBe(503);
    expect(down.headers.get('retry-after')).toBeTruthy();
    expect(await down.json()).toMatchObject({
      error: { code: 'cell_unavailable', details: { cellId: 'cell-slow', status: 'down' } },
    });
    expect((await fetch(`${router.url}/cells/cell-echo/webhooks/stripe`)).status).toBe(404);
    const big = await fetch(`${router.url}/cells/cell-echo/webhooks/stripe`, {
      method: 'POST',
      body: Buffer.alloc(MAX_BODY + 1),
    });
    expect(big.status).toBe(413);
  });
});

describe('metric labels', () => {
  const series = async () => (await routerMetricsText(router)).split('\n').filter((l) => l && !l.startsWith('#'));

  it('a webhook for a cell the directory does not list is 404 and no label of its own, however many are tried', async () => {
    const post = (cellId: string) =>
      fetch(`${router.url}/cells/${cellId}/webhooks/stripe`, { method: 'POST', body: '{}' });
    // The series of requests the router answers before choosing an upstream exist from the first such answer.
    expect((await post('attacker-first')).status).toBe(404);
    const before = await series();
    const ids = [...Array.from({ length: 40 }, () => `attacker-${randomBytes(4).toString('hex')}`), 'x%22y'];
    for (const id of ids) {
      const res = await post(id);
      expect(res.status, id).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'not_found', details: { cellId: id } } });
    }
    const after = await series();
    expect(after.length).toBe(before.length);
    const text = after.join('\n');
    for (const id of ['attacker-first', ...ids]) expect(text).not.toContain(id);
    expect(text).not.toMatch(/class="5xx"[^\n]*cell="none"|cell="none",class="5xx"/);
  });

  it("a token naming a cell the directory does not list is 503 as before, under no label of the token's", async () => {
    const cellId = `cell-unlisted-${randomBytes(4).toString('hex')}`;
    const eventId = randomUUID();
    const res = await fetch(`${router.url}/events/${eventId}/availability`, {
      headers: { 'x-admission-token': await identity.admissionToken({ sub: 'u1', eventId, purchaseCell: cellId }) },
    });
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({
      error: { code: 'cell_unavailable', details: { cellId, status: 'unknown' } },
    });
    expect((await series()).join('\n')).not.toContain(cellId);
  });
});

describe('the directory', () => {
  it('is polled with If-None-Match and a 304 keeps the copy', async () => {
    const version = router.directory.current!.version;
    const before = controlPlane.feedAnswers();
    await router.refreshDirectory();
    const after = controlPlane.feedAnswers();
    // The background poll (every 200 ms) may land in between too; every poll of an unchanged feed is a 304.
    expect(after.notModified).toBeGreaterThan(before.notModified);
    expect(after.full).toBe(before.full);
    expect(router.directory.current!.version).toBe(version);
  });

  it('refuses a token signed by a key the JWKS never listed', async () => {
    const token = await identity.unknownKidAdmissionToken({ sub: 'u1', eventId: echoEvent, purchaseCell: 'cell-echo' });
    const res = await fetch(`${router.url}/events/${echoEvent}/holds`, {
      method: 'POST',
      headers: { 'x-admission-token': token },
      body: '{}',
    });
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ error: { code: 'admission_invalid' } });
  });
});

describe('behind the load balancer', () => {
  it("keeps a connection left idle past Node's default keep-alive, as the ALB in front expects", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const req = request(`${router.url}/healthz`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode!, reused: req.reusedSocket }));
        });
        req.on('error', reject);
        req.end();
      });
    try {
      expect(await get()).toEqual({ status: 200, reused: false });
      // Node would have closed it after 5 s (plus its 1 s grace); the ALB keeps it for 60 and may send the next request on it.
      await new Promise((r) => setTimeout(r, 7_000));
      expect(await get()).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  }, 20_000);
});

describe("the router's own document", () => {
  it('serves an OpenAPI document of its endpoints, the errors it makes, its headers and its body limit', async () => {
    const res = await fetch(`${router.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(Object.keys(doc.paths).sort()).toEqual(['/healthz', '/me/orders', '/openapi.json', '/readyz']);
    expect(Object.keys(doc.components.headers)).toEqual(['X-Request-Id', 'X-Correlation-Id', 'Retry-After']);
    expect(doc.info.description).toContain(`over ${MAX_BODY} bytes`);
    expect(doc.info.description).toContain('504 upstream_timeout');
  });

  it('answers an undeclared method on its own endpoints with 405 and Allow', async () => {
    const res = await fetch(`${router.url}/healthz`, { method: 'POST' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD');
    expect((await res.json()).error.code).toBe('method_not_allowed');
  });
});
