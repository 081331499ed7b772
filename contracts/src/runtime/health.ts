import { createServer, type Server } from 'node:http';
import { METRICS_CONTENT_TYPE, metrics } from './metrics';

/** One part of a process that can tell whether it is doing its job (a consumer in its group, a loop that runs). */
export type ReadinessProbe = () => { ready: boolean };

/**
 * /healthz: the process answers. /readyz: every registered part is doing its job (200), else
 * 503 naming it. /metrics: the process's counters, with each consumer's readiness as a gauge; a process that keeps
 * a registry of its own (the router's, routerMetrics) passes its `render` instead.
 */
export function serveHealth(
  host: string,
  port: number,
  probes: Map<string, ReadinessProbe>,
  render: () => Promise<string> = metrics.render,
): Server {
  const evaluate = () => {
    const parts = Object.fromEntries([...probes].map(([name, probe]) => [name, probe()]));
    for (const part of Object.values(parts)) {
      if ('groupId' in part) metrics.consumerReady.set({ group: String(part.groupId) }, part.ready ? 1 : 0);
    }
    return parts;
  };
  return createServer((req, res) => {
    const path = req.url?.split('?')[0];
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (req.method !== 'GET') return json(405, { code: 'method_not_allowed' });
    if (path === '/healthz') return json(200, { status: 'ok' });
    if (path === '/readyz') {
      const parts = evaluate();
      const ready = Object.values(parts).every((p) => p.ready);
      return json(ready ? 200 : 503, { status: ready ? 'ready' : 'not_ready', parts });
    }
    if (path === '/metrics') {
      evaluate();
      void render().then((body) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(body));
      return;
    }
    json(404, { code: 'not_found' });
  }).listen(port, host);
}

/**
 * Readiness for a polling loop (relay, expiry, reconciler): ready while a pass has succeeded
 * within `staleAfterMs`, so a loop that keeps failing (its broker or database away) shows.
 */
export function loopHealth(staleAfterMs: number) {
  let lastSuccess = Date.now();
  return {
    succeeded() {
      lastSuccess = Date.now();
    },
    probe: (() => ({
      ready: Date.now() - lastSuccess <= staleAfterMs,
      lastSuccessAt: new Date(lastSuccess).toISOString(),
    })) satisfies ReadinessProbe,
  };
}
