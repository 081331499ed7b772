import { z } from 'zod';
import { CellWorkerConfig } from '../config';
import { startWorker } from '../runtime/worker';
import { createRelay, oldestUnpublishedAgeMs } from './relay';

const worker = startWorker(
  'outbox-relay',
  CellWorkerConfig.extend({
    RELAY_BATCH_SIZE: z.coerce.number().int().min(1).max(5000).default(500),
    RELAY_LEASE_MS: z.coerce.number().int().min(1000).default(30_000),
    RELAY_IDLE_MS: z.coerce.number().int().min(1).default(20),
    RELAY_RETAIN_PUBLISHED_MS: z.coerce.number().int().min(0).default(3_600_000),
  }),
);
const relay = createRelay(worker.ctx, worker.broker, {
  batchSize: worker.config.RELAY_BATCH_SIZE,
  leaseMs: worker.config.RELAY_LEASE_MS,
  idleMs: worker.config.RELAY_IDLE_MS,
  retainPublishedMs: worker.config.RELAY_RETAIN_PUBLISHED_MS,
});
const running = relay.start();
const gauge = setInterval(async () => {
  const ageMs = await oldestUnpublishedAgeMs(worker.ctx).catch(() => null);
  worker.log.info('outbox age', { metric: 'outbox_oldest_unpublished_ms', ageMs });
}, 10_000);
worker.onShutdown(async () => {
  clearInterval(gauge);
  relay.stop();
  await running;
});
