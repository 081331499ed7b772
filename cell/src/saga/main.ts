import { CellSagaConfig } from '../config';
import { runConsumer } from '../messaging/consumer-runner';
import { startWorker } from '../runtime/worker';
import { sagaHandlers } from './transitions';

const worker = startWorker('saga', CellSagaConfig);
const consumer = await runConsumer({ name: 'saga', ctx: worker.ctx, broker: worker.broker, handlers: sagaHandlers });
worker.readiness('consumer', () => consumer.health());
worker.onShutdown(() => consumer.stop());
