import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  answerUnparsableRequests,
  createAdmissionVerifier,
  createLogger,
  keepAliveBehindLoadBalancer,
  routerMetrics,
  serveHealth,
} from '@onsale/contracts';
import type { RouterConfig } from './config';
import { Directory } from './directory/directory';
import { startDirectoryPoller } from './directory/poller';
import { createRouterApp } from './http/app';
import { Upstreams } from './proxy/upstreams';

/** Builds the router from its configuration and serves it; main.ts and the tests both start it this way. */
export async function startRouter(config: RouterConfig) {
  const log = createLogger({ role: 'router' }, config.LOG_LEVEL);
  const directory = new Directory();
  const upstreams = new Upstreams({
    connections: config.UPSTREAM_CONNECTIONS,
    connectTimeoutMs: config.UPSTREAM_CONNECT_TIMEOUT_MS,
  });
  const controlPlaneUrl = config.CONTROL_PLANE_URL.replace(/\/+$/, '');
  const controlPlane = upstreams.for(controlPlaneUrl);
  const poller = startDirectoryPoller(directory, {
    url: `${controlPlaneUrl}/directory`,
    intervalMs: config.DIRECTORY_POLL_MS,
    timeoutMs: Math.max(1_000, config.UPSTREAM_TIMEOUT_MS),
    log,
    onChange: (snapshot) =>
      upstreams.retain(new Set([controlPlaneUrl, ...[...snapshot.cells.values()].map((cell) => cell.baseUrl)])),
  });
  const metrics = routerMetrics(() => {
    const dir = directory.current;
    return dir && { version: dir.version, ageSeconds: (Date.now() - dir.fetchedAt) / 1000 };
  });
  const listener = createRouterApp({
    config,
    directory,
    verifyAdmission: createAdmissionVerifier(config.ADMISSION_JWKS_URL, config.JWKS_CACHE_MS),
    upstreams,
    controlPlane,
    metrics,
    log,
  });

  // Requests are served from the start (control-plane paths need no directory); cell paths wait for a first copy.
  await poller.first;
  const server = answerUnparsableRequests(keepAliveBehindLoadBalancer(createServer(listener)));
  await listening(server.listen(config.PORT, config.HOST));
  const url = `http://${config.HOST}:${(server.address() as AddressInfo).port}`;
  // The metrics name every cell's request rate and error classes: they are served apart from the public port.
  const health =
    config.HEALTH_PORT === undefined
      ? null
      : serveHealth(
          config.HEALTH_HOST,
          config.HEALTH_PORT,
          new Map([['directory', () => ({ ready: directory.current !== null, version: directory.current?.version })]]),
          metrics.render,
        );
  if (health) await listening(health);
  const healthUrl = health && `http://${config.HEALTH_HOST}:${(health.address() as AddressInfo).port}`;
  log.info('router listening', { url, healthUrl, directoryVersion: directory.current?.version ?? null });

  return {
    url,
    /** Where its /metrics (and its /healthz and /readyz again) are served, if it has a HEALTH_PORT. */
    healthUrl,
    directory,
    metrics,
    /** Polls the control plane now instead of at the next tick (tests, and operators after a directory flip). */
    refreshDirectory: poller.pollOnce,
    async close() {
      poller.stop();
      await Promise.all([server, health].map((s) => s && new Promise<void>((resolve) => s.close(() => resolve()))));
      await upstreams.close();
    },
  };
}

function listening(server: Server): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
}
export type RunningRouter = Awaited<ReturnType<typeof startRouter>>;
