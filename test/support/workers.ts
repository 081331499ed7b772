import { createLogger } from '@onsale/contracts';
import { exportJWK, generateKeyPair } from 'jose';
import type Stripe from 'stripe';
import type { CellContext } from '../../cell/src/context';
import { openDatabase } from '../../cell/src/db/client';
import { createExpiryWorker } from '../../cell/src/expiry/expiry-worker';
import type { Broker } from '../../cell/src/messaging/broker';
import { type RetryPolicy, runConsumer } from '../../cell/src/messaging/consumer-runner';
import { createKafkaBroker } from '../../cell/src/messaging/kafka-broker';
import { paymentHandlers } from '../../cell/src/payments/handlers';
import { createRelay } from '../../cell/src/relay/relay';
import { sagaHandlers } from '../../cell/src/saga/transitions';
import { ticketHandlers } from '../../cell/src/tickets/issue-tickets';
import { ticketSigner } from '../../cell/src/tickets/signing';
import { kafkaBrokers } from './kafka';

/** A fresh Ed25519 ticket-signing key as the cell's configuration carries it. */
export async function ticketKeyJson(kid = 'tickets-1'): Promise<string> {
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519', extractable: true });
  return JSON.stringify({ ...(await exportJWK(privateKey)), kid });
}

/** A worker-side context on its own pool, as a worker process would have. */
export function workerContext(cellId: string, databaseUrl: string, role = 'worker'): CellContext {
  const database = openDatabase(databaseUrl, 5, `test-${role}`);
  return { db: database.db, database, cellId, epoch: 1, log: createLogger({ role, cellId }, 'error') };
}

export const fastRetry: RetryPolicy = { shortDelayMs: 200, shortAttempts: 2, longDelayMs: 500, longAttempts: 1 };

/**
 * The cell's relay, saga, ticket issuer and expiry worker, in this process, on the real
 * database and broker. Crash tests run roles as separate processes instead.
 */
export async function startCellWorkers(
  cellId: string,
  databaseUrl: string,
  roles: { relay?: boolean; saga?: boolean; tickets?: boolean; expiry?: boolean; payments?: boolean } = {
    relay: true,
    saga: true,
    tickets: true,
  },
  ticketKey?: string,
  /** The payment worker's Stripe client (required with `payments`) and its retry schedule. */
  options: { stripe?: Stripe; paymentsRetry?: RetryPolicy } = {},
) {
  const ctx = workerContext(cellId, databaseUrl);
  const broker: Broker = createKafkaBroker({ brokers: kafkaBrokers(), clientId: `test-${cellId}`, log: ctx.log });
  const stops: (() => Promise<void> | void)[] = [];
  if (roles.relay) {
    const relay = createRelay(ctx, broker, {
      batchSize: 200,
      leaseMs: 2_000,
      idleMs: 20,
      retainPublishedMs: 3_600_000,
    });
    const loop = relay.start();
    stops.push(() => loop.stop());
  }
  if (roles.saga) {
    const c = await runConsumer({ name: 'saga', ctx, broker, handlers: sagaHandlers, retry: fastRetry });
    stops.push(() => c.stop());
  }
  if (roles.tickets) {
    const sign = await ticketSigner(ticketKey ?? (await ticketKeyJson()));
    const c = await runConsumer({
      name: 'tickets',
      ctx,
      broker,
      handlers: ticketHandlers(sign, ctx.log),
      retry: fastRetry,
    });
    stops.push(() => c.stop());
  }
  if (roles.payments) {
    if (!options.stripe) throw new Error('the payments role needs options.stripe');
    const c = await runConsumer({
      name: 'payments',
      ctx,
      broker,
      handlers: paymentHandlers({ ctx, stripe: options.stripe }),
      retry: options.paymentsRetry ?? fastRetry,
    });
    stops.push(() => c.stop());
  }
  if (roles.expiry) {
    const expiry = createExpiryWorker(ctx, { batchSize: 100, intervalMs: 100 });
    const loop = expiry.start();
    stops.push(() => loop.stop());
  }
  return {
    ctx,
    broker,
    async stop() {
      for (const s of stops.reverse()) await s();
      await broker.close();
      await ctx.database.close();
    },
  };
}
