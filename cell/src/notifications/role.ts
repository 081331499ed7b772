import { runConsumer } from '../messaging/consumer-runner';
import { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { createMailer } from './mailer';
import { notificationHandlers } from './send-once';

export const startNotifications: StartRole<typeof CELL_ROLES.notifications> = async (worker, deps = {}) => {
  const mailer = createMailer(worker.config);
  const consumer = await runConsumer({
    name: CELL_ROLES.notifications.consumer,
    ctx: worker.ctx,
    broker: worker.broker,
    handlers: notificationHandlers({
      ctx: worker.ctx,
      mailer,
      leaseMs: worker.config.NOTIFY_CLAIM_LEASE_MS,
      log: worker.log,
    }),
    // A mail server that is away comes back: its notices wait on the long retry topic rather than dead-letter.
    retry: deps.retry ?? {
      shortDelayMs: 1_000,
      shortAttempts: 3,
      longDelayMs: Math.min(worker.config.NOTIFY_CLAIM_LEASE_MS, 30_000),
      longAttempts: 3,
      transientBudget: { ms: 24 * 3_600_000, maxLongDelayMs: 600_000 },
    },
  });
  worker.readiness('consumer', () => consumer.health());
  worker.onShutdown(() => consumer.stop());
  worker.onShutdown(() => mailer.close());
};
