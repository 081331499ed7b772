import { defaultRetryPolicy, type RetryPolicy, runConsumer } from '../messaging/consumer-runner';
import { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { paymentHandlers } from './handlers';
import { stripeFromConfig } from './stripe-client';

/**
 * Stripe down is retried, not dead-lettered: a command waits out an outage of up to a day (far longer than any
 * hold) at most a minute behind its end. What the command does once Stripe answers is decided then: an intent is
 * created only for an order still pending payment (a hold that lapsed meanwhile gets none, and its seats went back
 * on sale at its expiry; holds are not extended for an outage), and a capture or cancel follows the order's state.
 */
export const PAYMENT_RETRY: RetryPolicy = {
  ...defaultRetryPolicy,
  transientBudget: { ms: 24 * 3_600_000, maxLongDelayMs: 60_000 },
};

export const startPayments: StartRole<typeof CELL_ROLES.payments> = async (worker, deps = {}) => {
  const consumer = await runConsumer({
    name: CELL_ROLES.payments.consumer,
    ctx: worker.ctx,
    broker: worker.broker,
    handlers: paymentHandlers({ ctx: worker.ctx, stripe: deps.stripe ?? stripeFromConfig(worker.config) }),
    retry: deps.retry ?? PAYMENT_RETRY,
  });
  worker.readiness('consumer', () => consumer.health());
  worker.onShutdown(() => consumer.stop());
};
