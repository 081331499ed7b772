import { loopHealth, pollingLoop, type ReadinessProbe } from '@onsale/contracts';
import { deliverRevocations } from './admission/deliver';
import type { Services } from './context';
import { runSchedulerTick } from './onsale/scheduler';
import { presaleTick } from './presale/tick';
import { scalingClients } from './prewarm/clients';
import { syncDuePrewarms } from './prewarm/sync';
import { runControllerTick } from './release-controller/tick';
import type { CONTROL_PLANE_ROLES } from './runtime/roles';
import { openServices, type StartRole } from './runtime/start';
import { releaseAll } from './waiting-room/release';

/**
 * The control-plane worker's loops: onsale scheduler, waiting-room releaser, release controller, key rotation,
 * the delivery of revocations to the cells, and the pre-warm sync (scheduled scaling on AWS). Each registers its readiness; `stop` ends them all.
 */
export function runWorkerLoops(
  services: Services,
  readiness: (name: string, probe: ReadinessProbe) => void = () => {},
) {
  const c = services.config;
  const ticks: [string, number, () => Promise<unknown>][] = [
    ['scheduler', c.SCHEDULER_TICK_MS, () => runSchedulerTick(services)],
    ['releaser', c.RELEASE_TICK_MS, () => releaseAll(services)],
    ['controller', c.CONTROLLER_TICK_MS, () => runControllerTick(services)],
    ['key-rotation', 60_000, () => services.keys.rotateIfDue()],
    ['revocation-delivery', c.REVOCATION_DELIVERY_TICK_MS, () => deliverRevocations(services)],
    ['presale', c.PRESALE_TICK_MS, () => presaleTick(services)],
  ];
  // Without scalable targets (a local platform with no AWS API) the pre-warms are recorded and left unsynced.
  if (c.PREWARM_TARGETS) {
    const clients = scalingClients();
    ticks.push(['prewarm', c.PREWARM_TICK_MS, () => syncDuePrewarms(services, clients)]);
  }
  const loops = ticks.map(([name, intervalMs, tick]) => {
    // A tick that keeps failing for three of its periods (and at least 15 s) makes the worker not ready.
    const health = loopHealth(Math.max(15_000, 3 * intervalMs));
    readiness(name, health.probe);
    return pollingLoop({
      name: `${name} tick`,
      log: services.log,
      intervalMs,
      onSuccess: health.succeeded,
      pass: async () => {
        await tick();
      },
    });
  });
  services.log.info('worker started', {
    schedulerMs: c.SCHEDULER_TICK_MS,
    releaseMs: c.RELEASE_TICK_MS,
    controllerMs: c.CONTROLLER_TICK_MS,
    revocationDeliveryMs: c.REVOCATION_DELIVERY_TICK_MS,
  });
  return {
    async stop() {
      await Promise.all(loops.map((l) => l.stop()));
    },
  };
}

export const startWorker: StartRole<typeof CONTROL_PLANE_ROLES.worker> = async (role) => {
  const loops = runWorkerLoops(await openServices(role), role.readiness);
  role.onShutdown(() => loops.stop());
};
