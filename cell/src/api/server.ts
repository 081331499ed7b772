import { connectRedis, kafkaSecurity, redisConnectOptions } from '@onsale/aws-auth';
import { ConfigError, cellTopics, createLogger, labelProcessMetrics, metrics } from '@onsale/contracts';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import type { CellApiConfig } from '../config';
import type { CellContext } from '../context';
import { openDatabase } from '../db/client';
import { createCellApp } from '../http/app';
import type { CellServices } from '../http/services';
import { createVerifiers } from '../identity/verify';
import { perEventCache, readAvailability, readSeatBitmaps, servedDocument } from '../inventory/availability';
import { consumerGroupId } from '../messaging/consumers';
import { LatencyWindow } from '../ops/latency';
import { readLedgerFigures, readSignals } from '../ops/signals';
import { createStripeClient } from '../payments/stripe-client';
import { CELL_CONSUMERS, SALE_PATH_CONSUMERS } from '../runtime/roles';
import { createTicketStore } from '../tickets/store';

/** Builds the cell API from its configuration: one pool, one Redis, one app. */
export function buildCellApi(config: CellApiConfig) {
  const log = createLogger({ role: 'cell-api', cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL);
  const database = openDatabase(config.DATABASE_URL, config.DB_POOL_SIZE, `cell-${config.CELL_ID}-api`, config, {
    keepIdleConnections: true,
    connectTimeoutMs: config.DB_CONNECT_TIMEOUT_MS,
  });
  const redis = new Redis(config.REDIS_URL, {
    ...redisConnectOptions(config),
    enableOfflineQueue: false,
    commandTimeout: config.REDIS_COMMAND_TIMEOUT_MS,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', (err) => log.warn('redis error', { err }));
  // Only to read consumer lag for the release controller; the API never publishes.
  const broker = createKafkaBroker({
    brokers: config.KAFKA_BROKERS.split(','),
    clientId: `${config.CELL_ID}-api`,
    log,
    security: kafkaSecurity(config),
  });
  const topics = Object.values(cellTopics(config.CELL_ID));
  // Bounded like the scrape's: a frozen broker makes the lag unknown (null), which slows the release controller,
  // instead of holding the signals request past the controller's time-out.
  const consumerLag = async () => {
    const lags = await within(
      SIGNALS_BROKER_WAIT_MS,
      Promise.all(SALE_PATH_CONSUMERS.map((c) => broker.lag(consumerGroupId(config.CELL_ID, c), topics))),
    );
    return lags ? lags.reduce((a, b) => a + b, 0) : null;
  };
  const holdLatency = new LatencyWindow();
  const writeLatency = new LatencyWindow();
  labelProcessMetrics({ role: 'api', cell: config.CELL_ID });
  const refreshMetrics = async () => {
    metrics.ready.set((await services.ready()) ? 1 : 0);
    const ledger = await readLedgerFigures(ctx);
    metrics.activeHolds.set(ledger.activeHolds);
    metrics.outboxWaiting.set(ledger.outboxWaiting);
    metrics.outboxOldestAge.set(ledger.outboxAgeMs / 1000);
    for (const [event, n] of Object.entries(ledger.availableSeats)) metrics.seatsAvailable.set({ event }, n);
    // The broker's figures are bounded in time: a frozen broker must not stall the scrape that should show it.
    const groups = CELL_CONSUMERS.map((c) => consumerGroupId(config.CELL_ID, c));
    const [lags, dlq] = await Promise.all([
      within(1_500, Promise.all(groups.map((g) => broker.lag(g, topics)))),
      within(1_500, broker.depth(cellTopics(config.CELL_ID).deadLetter)),
    ]);
    for (const [i, group] of groups.entries()) {
      if (lags) metrics.consumerLag.set({ group }, lags[i]!);
      else metrics.consumerLag.remove({ group });
    }
    if (dlq !== undefined) metrics.dlqDepth.set(dlq);
  };

  const ctx: CellContext = {
    db: database.db,
    database,
    cellId: config.CELL_ID,
    epoch: config.CELL_EPOCH,
    log,
    writeLatency,
  };
  if (Boolean(config.STRIPE_WEBHOOK_SECRET) !== Boolean(config.STRIPE_SECRET_KEY)) {
    throw new ConfigError('STRIPE_WEBHOOK_SECRET and STRIPE_SECRET_KEY: set both to take Stripe webhooks, or neither');
  }
  const services: CellServices = {
    ctx,
    verifiers: createVerifiers(
      {
        cellId: config.CELL_ID,
        identityJwksUrl: config.IDENTITY_JWKS_URL,
        identityIssuer: config.IDENTITY_ISSUER,
        identityAudience: config.IDENTITY_AUDIENCE,
        admissionJwksUrl: config.ADMISSION_JWKS_URL,
        jwksCacheMs: config.JWKS_CACHE_MS,
      },
      redis,
    ),
    availability: perEventCache((eventId) => readAvailability(ctx, eventId), config.AVAILABILITY_CACHE_MS),
    seatBitmaps: perEventCache(
      async (eventId) => servedDocument(await readSeatBitmaps(ctx, eventId)),
      config.AVAILABILITY_CACHE_MS,
    ),
    signals: () => readSignals(ctx, { holdLatency, writeLatency, consumerLag }),
    refreshMetrics,
    internalToken: config.CELL_INTERNAL_TOKEN,
    ticketKeys: config.TICKET_PUBLIC_JWKS,
    ticketStore: createTicketStore(config),
    holdLatency,
    ...(config.STRIPE_WEBHOOK_SECRET &&
      config.STRIPE_SECRET_KEY && {
        stripe: {
          // A webhook request re-fetches at most one intent; it must not outlive Stripe's own delivery timeout.
          client: createStripeClient({
            secretKey: config.STRIPE_SECRET_KEY,
            apiBase: config.STRIPE_API_BASE,
            maxNetworkRetries: 1,
            timeoutMs: 5_000,
          }),
          webhookSecret: config.STRIPE_WEBHOOK_SECRET,
        },
      }),
    ready: async () => {
      try {
        const rows = await database.db.execute<{ epoch: string }>(
          sql`SELECT epoch FROM cell_epoch WHERE cell_id = ${config.CELL_ID}`,
        );
        return Number(rows.rows[0]?.epoch) === config.CELL_EPOCH;
      } catch {
        return false;
      }
    },
  };
  const app = createCellApp(services);
  let stopTokenRefresh = () => {};
  return {
    app,
    services,
    log,
    /** Opens the Redis connection; the API serves only after it. */
    async connect() {
      stopTokenRefresh = await connectRedis(redis, config.REDIS_URL, config);
    },
    async close() {
      stopTokenRefresh();
      redis.disconnect();
      await broker.close();
      await database.close();
    },
  };
}

/** How long GET /internal/signals waits for the broker's offsets; the control plane gives the whole call 2 s. */
const SIGNALS_BROKER_WAIT_MS = 1_500;

/** The value, or undefined once `ms` have passed without it (or it failed). */
async function within<T>(ms: number, promise: Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((r) => {
    timer = setTimeout(() => r(undefined), ms);
  });
  try {
    return await Promise.race([promise.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
