import { CellPaymentsConfig } from '../config';
import { runConsumer } from '../messaging/consumer-runner';
import { startWorker } from '../runtime/worker';
import { paymentHandlers } from './handlers';
import { stripeFromConfig } from './stripe-client';

const worker = startWorker('payments', CellPaymentsConfig);
const consumer = await runConsumer({
  name: 'payments',
  ctx: worker.ctx,
  broker: worker.broker,
  handlers: paymentHandlers({ ctx: worker.ctx, stripe: stripeFromConfig(worker.config) }),
});
worker.readiness('consumer', () => consumer.health());
worker.onShutdown(() => consumer.stop());
