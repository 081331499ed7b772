import { loopHealth } from '@onsale/contracts';
import type { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { createExpiryWorker } from './expiry-worker';

export const startExpiry: StartRole<typeof CELL_ROLES.expiry> = async (worker) => {
  const health = loopHealth(Math.max(15_000, 5 * worker.config.EXPIRY_INTERVAL_MS));
  worker.readiness('expiry', health.probe);
  const loop = createExpiryWorker(worker.ctx, {
    onPass: health.succeeded,
    batchSize: worker.config.EXPIRY_BATCH_SIZE,
    intervalMs: worker.config.EXPIRY_INTERVAL_MS,
  }).start();
  worker.onShutdown(() => loop.stop());
};
