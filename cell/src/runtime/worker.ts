import { kafkaSecurity } from '@onsale/aws-auth';
import {
  configOrExit,
  createLogger,
  type Logger,
  labelProcessMetrics,
  onShutdown,
  type ReadinessProbe,
  serveHealth,
} from '@onsale/contracts';
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
  /** Adds a part to /readyz: the worker is ready only while every part is. */
  readiness(name: string, probe: ReadinessProbe): void;
}

/**
 * The start of every worker process of a cell: configuration parsed once (failing fast,
 * naming the variable), one pool, one broker client, health on HEALTH_PORT, and a SIGTERM
 * that drains in-flight work with a deadline. A worker exits on its own only for a fatal
 * error (bad configuration, an unhandled rejection), and then says why.
 */
export function startWorker<S extends typeof CellWorkerConfig>(
  role: string,
  schema: S = CellWorkerConfig as S,
): Worker<z.infer<S>> {
  const config = configOrExit(role, schema) as z.infer<typeof CellWorkerConfig> & z.infer<S>;
  const log = createLogger({ role, cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL);
  labelProcessMetrics({ role, cell: config.CELL_ID });
  const database = openDatabase(config.DATABASE_URL, config.DB_POOL_SIZE, `cell-${config.CELL_ID}-${role}`, config);
  const ctx: CellContext = { db: database.db, database, cellId: config.CELL_ID, epoch: config.CELL_EPOCH, log };
  const broker = createKafkaBroker({
    brokers: config.KAFKA_BROKERS.split(','),
    clientId: `${config.CELL_ID}-${role}`,
    log,
    security: kafkaSecurity(config),
    group: {
      sessionTimeoutMs: config.KAFKA_SESSION_TIMEOUT_MS,
      heartbeatIntervalMs: config.KAFKA_HEARTBEAT_INTERVAL_MS,
      rebalanceTimeoutMs: config.KAFKA_REBALANCE_TIMEOUT_MS,
    },
  });
  const stops: (() => Promise<void> | void)[] = [];
  const probes = new Map<string, ReadinessProbe>();
  const health = config.HEALTH_PORT === undefined ? null : serveHealth(config.HEALTH_HOST, config.HEALTH_PORT, probes);

  onShutdown(log, async () => {
    for (const stop of stops) await Promise.resolve(stop()).catch((err) => log.warn('stop failed', { err }));
    await broker.close().catch(() => {});
    await database.close().catch(() => {});
    health?.close();
  });
  log.info('started', { healthPort: config.HEALTH_PORT });
  return {
    config,
    ctx,
    broker,
    log,
    onShutdown: (stop) => stops.push(stop),
    readiness: (name, probe) => probes.set(name, probe),
  };
}
