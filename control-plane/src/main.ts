import { serve } from '@hono/node-server';
import { configOrExit, labelProcessMetrics, onShutdown } from '@onsale/contracts';
import { ConfigSchema } from './config';
import { closeServices, connectServices, createServices } from './context';
import { createApp } from './http/app';

/** The control-plane API process. */
const config = configOrExit('control-plane-api', ConfigSchema);
labelProcessMetrics({ role: 'control-plane-api' });
const services = createServices(config);
const log = services.log.child({ role: 'api' });
await connectServices(services);
await services.keys.ensureKey();
const app = createApp(services);
const server = serve({ fetch: app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
  log.info('control-plane API listening', { host: config.HOST, port: info.port }),
);

onShutdown(
  log,
  async () => {
    await new Promise((r) => server.close(r));
    await closeServices(services);
  },
  10_000,
);
