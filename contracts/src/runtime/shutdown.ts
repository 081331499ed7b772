import type { Logger } from './log';

/**
 * The one way a process ends: on SIGTERM (ECS, the local supervisor) or SIGINT it runs `stop`
 * (finish in-flight work, close pools) once, and exits 0; if that takes longer than
 * `deadlineMs` it exits 1, as the orchestrator would kill it anyway. An unhandled rejection is a
 * bug, never a state to keep serving in: it is logged and takes the same path with exit 1.
 */
export function onShutdown(log: Logger, stop: () => Promise<void>, deadlineMs = 15_000): void {
  let stopping = false;
  const shutdown = (signal: string, code: number) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    setTimeout(() => process.exit(1), deadlineMs).unref();
    void stop()
      .catch((err) => log.error('stop failed', { err }))
      .finally(() => process.exit(code));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM', 0));
  process.on('SIGINT', () => shutdown('SIGINT', 0));
  process.on('unhandledRejection', (err) => {
    log.error('fatal: unhandled rejection', { err });
    shutdown('unhandledRejection', 1);
  });
}
