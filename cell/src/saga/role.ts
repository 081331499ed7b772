import { runConsumer } from '../messaging/consumer-runner';
import { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { sagaHandlers } from './transitions';

export const startSaga: StartRole<typeof CELL_ROLES.saga> = async (worker, deps = {}) => {
  const consumer = await runConsumer({
    name: CELL_ROLES.saga.consumer,
    ctx: worker.ctx,
    broker: worker.broker,
    handlers: sagaHandlers,
    retry: deps.retry,
  });
  worker.readiness('consumer', () => consumer.health());
  worker.onShutdown(() => consumer.stop());
};
