import { runConsumer } from '../messaging/consumer-runner';
import { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { paymentHandlers } from './handlers';
import { stripeFromConfig } from './stripe-client';

export const startPayments: StartRole<typeof CELL_ROLES.payments> = async (worker, deps = {}) => {
  const consumer = await runConsumer({
    name: CELL_ROLES.payments.consumer,
    ctx: worker.ctx,
    broker: worker.broker,
    handlers: paymentHandlers({ ctx: worker.ctx, stripe: deps.stripe ?? stripeFromConfig(worker.config) }),
    retry: deps.retry,
  });
  worker.readiness('consumer', () => consumer.health());
  worker.onShutdown(() => consumer.stop());
};
