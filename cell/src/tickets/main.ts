import { CellTicketConfig } from '../config';
import { runConsumer } from '../messaging/consumer-runner';
import { startWorker } from '../runtime/worker';
import { ticketHandlers } from './issue-tickets';
import { ticketSigner } from './signing';

const worker = startWorker('ticket-issuer', CellTicketConfig);
const sign = await ticketSigner(worker.config.TICKET_SIGNING_KEY);
const consumer = await runConsumer({
  name: 'tickets',
  ctx: worker.ctx,
  broker: worker.broker,
  handlers: ticketHandlers(sign, worker.log),
});
worker.readiness('consumer', () => consumer.health());
worker.onShutdown(() => consumer.stop());
