import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import {
  answerUnparsableRequests,
  configOrExit,
  createLogger,
  keepAliveBehindLoadBalancer,
  onShutdown,
  serveInProcesses,
} from '@onsale/contracts';
import { CellApiConfig } from '../config';
import { buildCellApi } from './server';

const config = configOrExit('api', CellApiConfig);
const log = createLogger({ role: 'cell-api', cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL);

await serveInProcesses(config.API_PROCESSES, log, async () => {
  const api = buildCellApi(config);
  await api.connect();
  const server = answerUnparsableRequests(
    keepAliveBehindLoadBalancer(
      serve({ fetch: api.app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
        api.log.info('cell api listening', { port: info.port, pid: process.pid }),
      ) as Server,
    ),
  );

  // Stop taking connections, let in-flight requests finish, then close the pools.
  onShutdown(api.log, async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });
});
