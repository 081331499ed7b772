import { createLogger, type Logger, parseEnv } from '@onsale/contracts';
import type { z } from 'zod';
import { CellWorkerConfig } from '../config';
import type { CellContext } from '../context';
import { openDatabase } from '../db/client';
import type { Broker } from '../messaging/broker';
import { createKafkaBroker } from '../messaging/kafka-broker';

export interface Worker<C> {
  config: C;
  ctx: CellContext;
  broker: Broker;
  log: Logger;
  /** Registers what to stop on SIGTERM, in order, before the pool and the broker close. */
  onShutdown(stop: () => Promise<void> | void): void;
}

/**
 * The start of every worker process of a cell: configuration parsed once (failing fast,
 * naming the variable), one pool, one broker client, and a SIGTERM that drains in-flight work
 * with a deadline.
 */
export function startWorker<S extends typeof CellWorkerConfig>(
  role: string,
  schema: S = CellWorkerConfig as S,
): Worker<z.infer<S>> {
  const config = parseEnv(schema) as z.infer<typeof CellWorkerConfig> & z.infer<S>;
  const log = createLogger({ role, cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL);
  const database = openDatabase(config.DATABASE_URL, config.DB_POOL_SIZE, `cell-${config.CELL_ID}-${role}`);
  const ctx: CellContext = { db: database.db, database, cellId: config.CELL_ID, epoch: config.CELL_EPOCH, log };
  const broker = createKafkaBroker({
    brokers: config.KAFKA_BROKERS.split(','),
    clientId: `${config.CELL_ID}-${role}`,
    log,
  });
  const stops: (() => Promise<void> | void)[] = [];

  let shuttingDown = false;
  const shutdown = async (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info('shutting down', { signal });
    const deadline = setTimeout(() => process.exit(1), 15_000);
    for (const stop of stops) await Promise.resolve(stop()).catch((err) => log.warn('stop failed', { err }));
    await broker.close().catch(() => {});
    await database.close().catch(() => {});
    clearTimeout(deadline);
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  log.info('started');
  return { config, ctx, broker, log, onShutdown: (stop) => stops.push(stop) };
}
