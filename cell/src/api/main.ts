import { serve } from '@hono/node-server';
import { configOrExit, onShutdown } from '@onsale/contracts';
import { CellApiConfig } from '../config';
import { buildCellApi } from './server';

const config = configOrExit('api', CellApiConfig);
const api = buildCellApi(config);
await api.connect();
const server = serve({ fetch: api.app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
  api.log.info('cell api listening', { port: info.port }),
);

// Stop taking connections, let in-flight requests finish, then close the pools.
onShutdown(api.log, async () => {
  await new Promise((r) => server.close(r));
  await api.close();
});
