import cluster from 'node:cluster';
import { serve } from '@hono/node-server';
import { configOrExit, createLogger, onShutdown } from '@onsale/contracts';
import { CellApiConfig } from '../config';
import { buildCellApi } from './server';

const config = configOrExit('api', CellApiConfig);

if (config.API_PROCESSES > 1 && cluster.isPrimary) {
  // The primary only forks and supervises; the processes share the listening port (the primary hands out
  // connections round robin). One that dies takes the group down: the supervisor (ECS, the launcher) restarts
  // the whole API, rather than this process quietly running with fewer workers.
  const log = createLogger({ role: 'cell-api', cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL);
  let stopping = false;
  for (let i = 0; i < config.API_PROCESSES; i++) cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) return;
    log.error('api process exited', { pid: worker.process.pid, code, signal });
    stopping = true;
    for (const w of Object.values(cluster.workers ?? {})) w?.kill('SIGTERM');
    process.exitCode = 1;
  });
  onShutdown(log, async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.kill('SIGTERM');
          }),
      ),
    );
  });
} else {
  const api = buildCellApi(config);
  await api.connect();
  const server = serve({ fetch: api.app.fetch, hostname: config.HOST, port: config.PORT }, (info) =>
    api.log.info('cell api listening', { port: info.port, pid: process.pid }),
  );

  // Stop taking connections, let in-flight requests finish, then close the pools.
  onShutdown(api.log, async () => {
    await new Promise((r) => server.close(r));
    await api.close();
  });
}
