import { createLogger } from '@onsale/contracts';
import { sql } from 'drizzle-orm';
import { Redis } from 'ioredis';
import type { CellApiConfig } from '../config';
import type { CellContext } from '../context';
import { openDatabase } from '../db/client';
import { createCellApp } from '../http/app';
import type { CellServices } from '../http/services';
import { createVerifiers } from '../identity/verify';
import { cachedAvailability } from '../inventory/availability';
import { LatencyWindow } from '../ops/latency';
import { readSignals } from '../ops/signals';

export interface CellApiDeps {
  /** Lag of the cell's consumer groups; the API process asks Kafka when it has brokers. */
  consumerLag?: () => Promise<number>;
}

/** Builds the cell API from its configuration: one pool, one Redis, one app. */
export function buildCellApi(config: CellApiConfig, deps: CellApiDeps = {}) {
  const log = createLogger({ role: 'cell-api', cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL);
  const database = openDatabase(config.DATABASE_URL, config.DB_POOL_SIZE, `cell-${config.CELL_ID}-api`);
  const redis = new Redis(config.REDIS_URL, {
    enableOfflineQueue: false,
    commandTimeout: 500,
    maxRetriesPerRequest: 1,
  });
  redis.on('error', (err) => log.warn('redis error', { err }));
  const holdLatency = new LatencyWindow();
  const writeLatency = new LatencyWindow();

  const ctx: CellContext = {
    db: database.db,
    database,
    cellId: config.CELL_ID,
    epoch: config.CELL_EPOCH,
    log,
    writeLatency,
  };
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
    availability: cachedAvailability(ctx, config.AVAILABILITY_CACHE_MS),
    signals: () => readSignals(ctx, { holdLatency, writeLatency, consumerLag: deps.consumerLag ?? (async () => 0) }),
    internalToken: config.CELL_INTERNAL_TOKEN,
    holdLatency,
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
  return {
    app,
    services,
    log,
    async close() {
      redis.disconnect();
      await database.close();
    },
  };
}
