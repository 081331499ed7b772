import { runConsumer } from '../messaging/consumer-runner';
import { CELL_ROLES } from '../runtime/roles';
import type { StartRole } from '../runtime/worker';
import { documentHandlers } from './documents';
import { ticketHandlers } from './issue-tickets';
import { ticketSigner, voidListSigner } from './signing';
import { createTicketStore } from './store';

export const startTickets: StartRole<typeof CELL_ROLES.tickets> = async (worker, deps = {}) => {
  const sign = await ticketSigner(worker.config.TICKET_SIGNING_KEY);
  const signVoids = await voidListSigner(worker.config.TICKET_SIGNING_KEY);
  const store = createTicketStore(worker.config);
  // A local S3-compatible server starts empty; a deployed cell's bucket belongs to its stack, never to the worker.
  if (worker.config.S3_ENDPOINT) await store.ensureBucket();
  // One consumer (one group, one inbox name) issues the tickets and then stores their documents.
  const consumer = await runConsumer({
    name: CELL_ROLES.tickets.consumer,
    ctx: worker.ctx,
    broker: worker.broker,
    handlers: {
      ...ticketHandlers(sign, worker.log),
      ...documentHandlers({ store, signVoids, cellId: worker.config.CELL_ID, log: worker.log }),
    },
    retry: deps.retry,
  });
  worker.readiness('consumer', () => consumer.health());
  worker.onShutdown(() => consumer.stop());
};
