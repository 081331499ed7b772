import { CellWorkerConfig } from '@onsale/cell/config';
import type { CellContext } from '@onsale/cell/context';
import { openDatabase } from '@onsale/cell/db/client';
import { startExpiry } from '@onsale/cell/expiry/role';
import type { RetryPolicy } from '@onsale/cell/messaging/consumer-runner';
import { startNotifications } from '@onsale/cell/notifications/role';
import { startPayments } from '@onsale/cell/payments/role';
import { startReconciler } from '@onsale/cell/reconciler/role';
import { startRelay } from '@onsale/cell/relay/role';
import { CELL_ROLE_NAMES, CELL_ROLES, type CellRole, type CellRoleName } from '@onsale/cell/runtime/roles';
import { createWorker, type StartRole } from '@onsale/cell/runtime/worker';
import { startSaga } from '@onsale/cell/saga/role';
import { startTickets } from '@onsale/cell/tickets/role';
import { createLogger } from '@onsale/contracts';
import { exportJWK, generateKeyPair } from 'jose';
import type Stripe from 'stripe';
import { kafkaBrokers } from './kafka';
import { mailServer } from './mailbox';
import { serviceEnv } from './services';

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

const ROLE_STARTS = {
  relay: startRelay,
  saga: startSaga,
  payments: startPayments,
  tickets: startTickets,
  expiry: startExpiry,
  reconciler: startReconciler,
  notifications: startNotifications,
} satisfies { [N in CellRoleName]: StartRole<(typeof CELL_ROLES)[N]> };

/**
 * Worker roles of a cell in this process, started as their processes start them (the catalog's
 * schema and each role's `role.ts`), on the real database and broker, sharing one pool and one
 * broker client. Tests tighten the timings through the roles' own variables; crash tests run
 * roles as separate processes instead.
 */
export async function startCellWorkers(
  cellId: string,
  databaseUrl: string,
  roles: Partial<Record<CellRoleName, boolean>> = { relay: true, saga: true, tickets: true },
  ticketKey?: string,
  /** The payment worker's Stripe client (required with `payments`) and its retry schedule. */
  options: { stripe?: Stripe; paymentsRetry?: RetryPolicy } = {},
) {
  const env: Record<string, string> = {
    ...serviceEnv(),
    CELL_ID: cellId,
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: kafkaBrokers().join(','),
    LOG_LEVEL: 'error',
    RELAY_BATCH_SIZE: '200',
    RELAY_LEASE_MS: '2000',
    RELAY_IDLE_MS: '20',
    EXPIRY_BATCH_SIZE: '100',
    EXPIRY_INTERVAL_MS: '100',
    TICKET_SIGNING_KEY: ticketKey ?? (await ticketKeyJson()),
    // Every cell's documents under its own prefix of the shared local bucket.
    TICKETS_PREFIX: `${cellId}/`,
    // The payment roles are handed the emulator's client; the key only satisfies their schema.
    STRIPE_SECRET_KEY: 'sk_test_handed_in',
    ...(roles.notifications ? { SMTP_URL: mailServer().smtpUrl } : {}),
    MAIL_FROM: 'Onsale tickets <tickets@onsale.test>',
    NOTIFY_CLAIM_LEASE_MS: '2000',
  };
  const worker = createWorker(`test-${cellId}`, CellWorkerConfig.parse(env));
  for (const name of CELL_ROLE_NAMES.filter((n) => roles[n])) {
    if ((name === 'payments' || name === 'reconciler') && !options.stripe)
      throw new Error(`the ${name} role needs options.stripe`);
    const retry = name === 'payments' ? (options.paymentsRetry ?? fastRetry) : fastRetry;
    const start = ROLE_STARTS[name] as StartRole<CellRole>;
    await start({ ...worker, config: CELL_ROLES[name].config.parse(env) }, { retry, stripe: options.stripe });
  }
  return { ctx: worker.ctx, broker: worker.broker, stop: () => worker.stop() };
}
