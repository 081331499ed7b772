import { loopHealth } from '@onsale/contracts';
import { CellExpiryConfig } from '../config';
import { startWorker } from '../runtime/worker';
import { createExpiryWorker } from './expiry-worker';

const worker = startWorker('expiry', CellExpiryConfig);
const health = loopHealth(Math.max(15_000, 5 * worker.config.EXPIRY_INTERVAL_MS));
worker.readiness('expiry', health.probe);
const expiry = createExpiryWorker(worker.ctx, {
  onPass: health.succeeded,
  batchSize: worker.config.EXPIRY_BATCH_SIZE,
  intervalMs: worker.config.EXPIRY_INTERVAL_MS,
});
const loop = expiry.start();
worker.onShutdown(async () => {
  await loop.stop();
});
