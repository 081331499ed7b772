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
import type { Broker } from '@onsale/messaging/broker';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import type Stripe from 'stripe';
import type { z } from 'zod';
import type { CellWorkerConfig } from '../config';
import type { CellContext } from '../context';
import { openDatabase } from '../db/client';
import type { RetryPolicy } from '../messaging/consumer-runner';
import type { CellRole } from './roles';

export interface Worker<C> {
  config: C;
  ctx: CellContext;
  broker: Broker;
  log: Logger;
  /** Registers what to stop, in order, before the pool and the broker close. */
  onShutdown(stop: () => Promise<void> | void): void;
  /** Adds a part to /readyz: the worker is ready only while every part is. */
  readiness(name: string, probe: ReadinessProbe): void;
}

/** What a role takes from outside its configuration: only tests hand these in (a faster retry schedule, an emulator's client). */
export interface RoleDeps {
  retry?: RetryPolicy;
  stripe?: Stripe;
}

export type RoleConfig<R extends CellRole> = z.infer<R['config']>;

/** How a role starts on a worker: what it runs, its readiness and its stop (each role's `role.ts`). */
export type StartRole<R extends CellRole> = (worker: Worker<RoleConfig<R>>, deps?: RoleDeps) => Promise<void>;

/**
 * A worker of a cell on parsed configuration: one pool, one broker client, health on HEALTH_PORT
 * when set. `stop` runs the role's stops in order, then closes the broker, the pool and health.
 */
export function createWorker<C extends CellWorkerConfig>(
  name: string,
  config: C,
  log = createLogger({ role: name, cellId: config.CELL_ID, region: config.CELL_REGION }, config.LOG_LEVEL),
): Worker<C> & { stop(): Promise<void> } {
  const database = openDatabase(config.DATABASE_URL, config.DB_POOL_SIZE, `cell-${config.CELL_ID}-${name}`, config);
  const ctx: CellContext = { db: database.db, database, cellId: config.CELL_ID, epoch: config.CELL_EPOCH, log };
  const broker = createKafkaBroker({
    brokers: config.KAFKA_BROKERS.split(','),
    clientId: `${config.CELL_ID}-${name}`,
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
  return {
    config,
    ctx,
    broker,
    log,
    onShutdown: (stop) => stops.push(stop),
    readiness: (name, probe) => probes.set(name, probe),
    async stop() {
      for (const stop of stops) await Promise.resolve(stop()).catch((err) => log.warn('stop failed', { err }));
      await broker.close().catch(() => {});
      await database.close().catch(() => {});
      health?.close();
    },
  };
}

/**
 * The start of every worker process of a cell: configuration parsed once (failing fast, naming
 * the variable), the worker, its role started, and a SIGTERM that drains in-flight work with a
 * deadline. A worker exits on its own only for a fatal error (bad configuration, an unhandled
 * rejection), and then says why.
 */
export async function runRole<R extends CellRole>(role: R, start: StartRole<R>): Promise<void> {
  const config = configOrExit(role.process, role.config) as RoleConfig<R>;
  labelProcessMetrics({ role: role.process, cell: config.CELL_ID });
  const worker = createWorker(role.process, config);
  onShutdown(worker.log, () => worker.stop());
  // Not ready until the role has started (its consumer joined, its loop running) and registered its own parts.
  let started = false;
  worker.readiness('start', () => ({ ready: started }));
  await start(worker);
  started = true;
  worker.log.info('started', { healthPort: config.HEALTH_PORT });
}
