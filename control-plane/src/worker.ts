import { loadConfig } from './config';
import { closeServices, connectServices, createServices, type Services } from './context';
import type { Logger } from './lib/logger';
import { runSchedulerTick } from './onsale/scheduler';
import { runControllerTick } from './release-controller/tick';
import { releaseAll } from './waiting-room/release';

/** A loop that runs `fn` every `ms`, never overlapping itself, logging (not dying on) failures. */
function loop(name: string, ms: number, log: Logger, fn: () => Promise<unknown>) {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | null = null;
  let stopped = false;
  const tick = () => {
    running = fn()
      .then(() => undefined)
      .catch((err) => log.error(`${name} tick failed`, { err }))
      .finally(() => {
        running = null;
        if (!stopped) timer = setTimeout(tick, ms);
      });
  };
  timer = setTimeout(tick, 0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** The control-plane worker: onsale scheduler, waiting-room releaser, release controller, key rotation. */
export function startWorker(services: Services) {
  const log = services.log.child({ role: 'worker' });
  const c = services.config;
  const loops = [
    loop('scheduler', c.SCHEDULER_TICK_MS, log, () => runSchedulerTick(services)),
    loop('releaser', c.RELEASE_TICK_MS, log, () => releaseAll(services)),
    loop('controller', c.CONTROLLER_TICK_MS, log, () => runControllerTick(services)),
    loop('key-rotation', 60_000, log, () => services.keys.rotateIfDue()),
  ];
  log.info('worker started', {
    schedulerMs: c.SCHEDULER_TICK_MS,
    releaseMs: c.RELEASE_TICK_MS,
    controllerMs: c.CONTROLLER_TICK_MS,
  });
  return { stop: () => Promise.all(loops.map((l) => l.stop())) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(1);
  }
  const services = createServices(config);
  await connectServices(services);
  await services.keys.ensureKey();
  const worker = startWorker(services);
  for (const sig of ['SIGTERM', 'SIGINT'] as const) {
    process.on(sig, async () => {
      services.log.info('worker draining', { signal: sig });
      const deadline = setTimeout(() => process.exit(1), 15_000);
      deadline.unref();
      await worker.stop();
      await closeServices(services);
      process.exit(0);
    });
  }
}
