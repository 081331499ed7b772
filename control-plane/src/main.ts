import { serve } from '@hono/node-server';
import { labelProcessMetrics } from '@onsale/contracts';
import { loadConfig } from './config';
import { closeServices, connectServices, createServices } from './context';
import { createApp } from './http/app';

/** The control-plane API process. */
const config = (() => {
  try {
    return loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
})();
labelProcessMetrics({ role: 'control-plane-api' });
const services = createServices(config);
const log = services.log.child({ role: 'api' });
await connectServices(services);
await services.keys.ensureKey();
const app = createApp(services);
const server = serve({ fetch: app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
  log.info('control-plane API listening', { host: config.HOST, port: info.port }),
);

let stopping = false;
for (const sig of ['SIGTERM', 'SIGINT'] as const) {
  process.on(sig, () => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal: sig });
    const deadline = setTimeout(() => process.exit(1), 10_000);
    deadline.unref();
    server.close(async () => {
      await closeServices(services);
      process.exit(0);
    });
  });
}
