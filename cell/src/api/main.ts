import { serve } from '@hono/node-server';
import { configOrExit } from '@onsale/contracts';
import { CellApiConfig } from '../config';
import { buildCellApi } from './server';

const config = configOrExit('api', CellApiConfig);
const api = buildCellApi(config);
await api.connect();
const server = serve({ fetch: api.app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
  api.log.info('cell api listening', { port: info.port }),
);

async function shutdown(signal: string) {
  api.log.info('shutting down', { signal });
  const deadline = setTimeout(() => process.exit(1), 10_000);
  server.close(async () => {
    await api.close();
    clearTimeout(deadline);
    process.exit(0);
  });
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
