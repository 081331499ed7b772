import cluster from 'node:cluster';
import type { Logger } from './log';
import { onShutdown } from './shutdown';

/**
 * An API role as `count` processes sharing its listening port (node:cluster: the primary hands connections out
 * round robin), one per core on a machine with several; with a count of 1, `serve` runs in this process. The primary
 * only forks and supervises: one process that dies takes the group down, so the supervisor (ECS, the launcher)
 * restarts the whole API rather than it quietly serving with fewer. SIGTERM reaches every process, and each drains
 * through its own onShutdown.
 */
export async function serveInProcesses(count: number, log: Logger, serve: () => Promise<void>): Promise<void> {
  if (count <= 1 || !cluster.isPrimary) return serve();
  let stopping = false;
  for (let i = 0; i < count; i++) cluster.fork();
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
}
