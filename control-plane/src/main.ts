import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import {
  configOrExit,
  createLogger,
  keepAliveBehindLoadBalancer,
  labelProcessMetrics,
  onShutdown,
  serveInProcesses,
} from '@onsale/contracts';
import { ConfigSchema } from './config';
import { closeServices, connectServices, createServices, reportSigningKey } from './context';
import { createApp } from './http/app';

/** The control-plane API process (or, with API_PROCESSES > 1, the primary of several sharing its port). */
const config = configOrExit('control-plane-api', ConfigSchema);

await serveInProcesses(
  config.API_PROCESSES,
  createLogger({ service: 'control-plane', role: 'api' }, config.LOG_LEVEL),
  async () => {
    labelProcessMetrics({ role: 'control-plane-api' });
    const services = createServices(config);
    const log = services.log.child({ role: 'api' });
    await connectServices(services);
    await services.keys.ensureKey();
    await reportSigningKey(services);
    const app = createApp(services);
    const server = keepAliveBehindLoadBalancer(
      serve({ fetch: app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
        log.info('control-plane API listening', { host: config.HOST, port: info.port, pid: process.pid }),
      ) as Server,
    );

    onShutdown(
      log,
      async () => {
        await new Promise((r) => server.close(r));
        await closeServices(services);
      },
      10_000,
    );
  },
);
