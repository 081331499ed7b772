import { CellTicketConfig } from '../config';
import { runConsumer } from '../messaging/consumer-runner';
import { startWorker } from '../runtime/worker';
import { documentHandlers } from './documents';
import { ticketHandlers } from './issue-tickets';
import { ticketSigner, voidListSigner } from './signing';
import { createTicketStore } from './store';

const worker = startWorker('ticket-issuer', CellTicketConfig);
const sign = await ticketSigner(worker.config.TICKET_SIGNING_KEY);
const signVoids = await voidListSigner(worker.config.TICKET_SIGNING_KEY);
const store = createTicketStore(worker.config);
// A local S3-compatible server starts empty; a deployed cell's bucket belongs to its stack, never to the worker.
if (worker.config.S3_ENDPOINT) await store.ensureBucket();
// One consumer (one group, one inbox name) issues the tickets and then stores their documents.
const consumer = await runConsumer({
  name: 'tickets',
  ctx: worker.ctx,
  broker: worker.broker,
  handlers: {
    ...ticketHandlers(sign, worker.log),
    ...documentHandlers({ store, signVoids, cellId: worker.config.CELL_ID, log: worker.log }),
  },
});
worker.readiness('consumer', () => consumer.health());
worker.onShutdown(() => consumer.stop());
