import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startIdentity, type TestIdentity } from '../../test/support/identity';
import { RouterConfig } from '../src/config';
import { type RunningRouter, startRouter } from '../src/router';
import { type FakeControlPlane, routerFor, startFakeControlPlane, startFakeServer } from './fakes';

/**
 * The router's metrics name every cell's request rate, error classes and latencies: they are served on its health
 * port (HEALTH_PORT, the task's loopback, where the collector beside it scrapes), never on the public port the
 * internet reaches through CloudFront and the load balancer.
 */
let identity: TestIdentity;
let controlPlane: FakeControlPlane;
let cell: Awaited<ReturnType<typeof startFakeServer>>;
let router: RunningRouter;
const eventId = randomUUID();

beforeAll(async () => {
  identity = await startIdentity();
  cell = await startFakeServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/plain' }).end('cell'));
  controlPlane = await startFakeControlPlane();
  controlPlane.addCell('cell-a', cell.url);
  controlPlane.placeEvent(eventId, 'cell-a');
  router = await routerFor(controlPlane, identity.admissionJwksUrl);
});

afterAll(async () => {
  await router?.close();
  await Promise.all([controlPlane?.close(), cell?.close()]);
  await identity?.close();
});

/** A GET with its path sent as written: fetch and `new URL()` would resolve its dot segments first. */
function getAsWritten(origin: string, path: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: 'GET' }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Requests that reached an upstream: the cell's, and the control plane's other than the directory polls. */
const forwarded = () => cell.requests.length + controlPlane.requests.filter((r) => r.url !== '/directory').length;

describe("the router's metrics", () => {
  it('are served on its health port, beside /healthz and /readyz (a directory loaded)', async () => {
    expect(router.healthUrl).not.toBe(router.url);
    await fetch(`${router.url}/events/${eventId}/availability`);
    const metrics = await fetch(`${router.healthUrl}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await metrics.text();
    expect(text).toMatch(/^router_requests_total\{cell="cell-a",class="2xx"\} 1$/m);
    expect(text).toMatch(/^router_directory_version \d+$/m);
    // The router's own registry alone: no series a scrape could take for a cell's or the control plane's.
    expect(text).not.toMatch(/^onsale_/m);

    expect((await fetch(`${router.healthUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${router.healthUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({
      status: 'ready',
      parts: { directory: { ready: true, version: router.directory.current!.version } },
    });
  });

  it('are not on its public port: GET /metrics there is a 404 like any unknown path, and reaches no upstream', async () => {
    const before = forwarded();
    for (const path of ['/metrics', '/metrics?format=prometheus', '/metrics/', '/METRICS', '/%6detrics']) {
      const res = await getAsWritten(router.url, path);
      expect(res.status, path).toBe(404);
      expect(JSON.parse(res.body), path).toMatchObject({ error: { code: 'not_found' } });
      expect(res.body, path).not.toContain('router_');
    }
    const head = await fetch(`${router.url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(404);
    expect(head.headers.get('allow')).toBeNull();
    expect(forwarded()).toBe(before);
  });

  it('are not reached on its public port through a dot segment or an encoded separator either: 400, reaching no upstream', async () => {
    const before = forwarded();
    for (const [path, reason] of [
      ['/./metrics', 'dot_segment'],
      ['/x/../metrics', 'dot_segment'],
      ['/%2e/metrics', 'dot_segment'],
      [`/events/${eventId}/holds/%2e%2e/%2e%2e/%2e%2e/metrics`, 'dot_segment'],
      [`/events/${eventId}/availability/..%2f..%2f..%2fmetrics`, 'encoded_separator'],
    ] as const) {
      const res = await getAsWritten(router.url, path);
      expect(res.status, path).toBe(400);
      expect(JSON.parse(res.body), path).toMatchObject({ error: { code: 'bad_request', details: { path, reason } } });
      expect(res.body, path).not.toContain('router_');
    }
    expect(forwarded()).toBe(before);
  });

  it('are served nowhere without a HEALTH_PORT: the router still routes, its public port still answers /readyz', async () => {
    const plain = await startRouter(
      RouterConfig.parse({
        PORT: '0',
        CONTROL_PLANE_URL: controlPlane.url,
        ADMISSION_JWKS_URL: identity.admissionJwksUrl,
        LOG_LEVEL: 'warn',
      }),
    );
    try {
      expect(plain.healthUrl).toBeNull();
      expect((await fetch(`${plain.url}/readyz`)).status).toBe(200);
      expect((await fetch(`${plain.url}/events/${eventId}/availability`)).status).toBe(200);
      expect((await fetch(`${plain.url}/metrics`)).status).toBe(404);
    } finally {
      await plain.close();
    }
  });
});
