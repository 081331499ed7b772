import { loopHealth } from '@onsale/contracts';
import type { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { createRelay, oldestUnpublishedAgeMs } from './relay';

export const startRelay: StartRole<typeof CELL_ROLES.relay> = async (worker) => {
  // An idle relay passes every RELAY_IDLE_MS, every RELAY_QUIET_MS once nothing came for 2 s; one that cannot
  // publish backs off to 5 s between tries.
  const health = loopHealth(Math.max(15_000, worker.config.KAFKA_SESSION_TIMEOUT_MS));
  worker.readiness('relay', health.probe);
  const relay = createRelay(worker.ctx, worker.broker, {
    onPass: health.succeeded,
    batchSize: worker.config.RELAY_BATCH_SIZE,
    leaseMs: worker.config.RELAY_LEASE_MS,
    idleMs: worker.config.RELAY_IDLE_MS,
    quietMs: worker.config.RELAY_QUIET_MS,
    retainPublishedMs: worker.config.RELAY_RETAIN_PUBLISHED_MS,
  });
  const loop = relay.start();
  const gauge = setInterval(async () => {
    const ageMs = await oldestUnpublishedAgeMs(worker.ctx).catch(() => null);
    worker.log.info('outbox age', { metric: 'outbox_oldest_unpublished_ms', ageMs });
  }, 10_000);
  worker.onShutdown(async () => {
    clearInterval(gauge);
    await loop.stop();
  });
};
