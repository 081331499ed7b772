import { z } from 'zod';
import { CellWorkerConfig } from '../config';
import { startWorker } from '../runtime/worker';
import { createExpiryWorker } from './expiry-worker';

const worker = startWorker(
  'expiry',
  CellWorkerConfig.extend({
    EXPIRY_BATCH_SIZE: z.coerce.number().int().min(1).max(10_000).default(200),
    EXPIRY_INTERVAL_MS: z.coerce.number().int().min(10).default(1_000),
  }),
);
const expiry = createExpiryWorker(worker.ctx, {
  batchSize: worker.config.EXPIRY_BATCH_SIZE,
  intervalMs: worker.config.EXPIRY_INTERVAL_MS,
});
const running = expiry.start();
worker.onShutdown(async () => {
  expiry.stop();
  await running;
});
