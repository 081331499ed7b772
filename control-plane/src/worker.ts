import {
  configOrExit,
  labelProcessMetrics,
  loopHealth,
  onShutdown,
  pollingLoop,
  type ReadinessProbe,
  serveHealth,
} from '@onsale/contracts';
import { deliverRevocations } from './admission/deliver';
import { ConfigSchema } from './config';
import { closeServices, connectServices, createServices, reportSigningKey, type Services } from './context';
import { runSchedulerTick } from './onsale/scheduler';
import { runControllerTick } from './release-controller/tick';
import { releaseAll } from './waiting-room/release';

/**
 * The control-plane worker: onsale scheduler, waiting-room releaser, release controller, key rotation, and the
 * delivery of revocations to the cells.
 */
export function startWorker(services: Services) {
  const log = services.log.child({ role: 'worker' });
  const c = services.config;
  const ticks: [string, number, () => Promise<unknown>][] = [
    ['scheduler', c.SCHEDULER_TICK_MS, () => runSchedulerTick(services)],
    ['releaser', c.RELEASE_TICK_MS, () => releaseAll(services)],
    ['controller', c.CONTROLLER_TICK_MS, () => runControllerTick(services)],
    ['key-rotation', 60_000, () => services.keys.rotateIfDue()],
    ['revocation-delivery', c.REVOCATION_DELIVERY_TICK_MS, () => deliverRevocations(services)],
  ];
  const probes = new Map<string, ReadinessProbe>();
  const loops = ticks.map(([name, intervalMs, tick]) => {
    // A tick that keeps failing for three of its periods (and at least 15 s) makes the worker not ready.
    const health = loopHealth(Math.max(15_000, 3 * intervalMs));
    probes.set(name, health.probe);
    return pollingLoop({
      name: `${name} tick`,
      log,
      intervalMs,
      onSuccess: health.succeeded,
      pass: async () => {
        await tick();
      },
    });
  });
  const server = c.HEALTH_PORT === undefined ? null : serveHealth(c.HOST, c.HEALTH_PORT, probes);
  log.info('worker started', {
    schedulerMs: c.SCHEDULER_TICK_MS,
    releaseMs: c.RELEASE_TICK_MS,
    controllerMs: c.CONTROLLER_TICK_MS,
    revocationDeliveryMs: c.REVOCATION_DELIVERY_TICK_MS,
  });
  return {
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
      server?.close();
    },
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const config = configOrExit('control-plane-worker', ConfigSchema);
  labelProcessMetrics({ role: 'control-plane-worker' });
  const services = createServices(config);
  await connectServices(services);
  await services.keys.ensureKey();
  await reportSigningKey(services);
  const worker = startWorker(services);
  onShutdown(services.log.child({ role: 'worker' }), async () => {
    await worker.stop();
    await closeServices(services);
  });
}
