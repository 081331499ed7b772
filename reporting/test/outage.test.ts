import { randomUUID } from 'node:crypto';
import { cellTopics, createLogger, type Logger } from '@onsale/contracts';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { startPgProxy } from '../../test/support/db-outage';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { paidOrderSaga } from '../../test/support/sale-events';
import { migrateReporting } from '../src/db/migrate';
import { objectStoreFromConfig } from '../src/s3';
import { createSourceConsumer } from '../src/source-consumer';
import { testReporterConfig } from './support';

/**
 * The projections' database lost while a cell's purchase topic has events to project: the batch cannot be applied,
 * and is read again after a wait that grows, not at once in a loop; once the database is back it is applied, once.
 */
const cellId = uniqueCellId('rdb');
const sale = { tenantId: `tenant-${cellId}`, eventId: randomUUID() };
const topic = cellTopics(cellId).purchase;
const order = paidOrderSaga(cellId, sale, 0);
const failures: { attempt: number; waitMs: number }[] = [];
const log: Logger = {
  ...createLogger({ role: 'test' }, 'error'),
  warn(msg, fields) {
    if (msg === 'batch failed; reading it again') failures.push(fields as { attempt: number; waitMs: number });
  },
  child: () => log,
};
let db: TestDatabase;
let proxy: Awaited<ReturnType<typeof startPgProxy>>;
let pool: pg.Pool;
const broker = createKafkaBroker({ brokers: kafkaBrokers(), clientId: 'reporting-outage-test', log });

beforeAll(async () => {
  db = await createTestDatabase('rep_outage', 'control-plane');
  proxy = await startPgProxy(db.url);
  pool = new pg.Pool({ connectionString: proxy.url, max: 2, connectionTimeoutMillis: 1_000 });
  // The proxy going down cuts the pool's idle connections too: the pool reports that, the next query reconnects.
  pool.on('error', () => {});
  await migrateReporting(pool);
  await provisionCellTopics(cellId, 1);
  const kafka = new Kafka({ clientId: 'reporting-outage-test', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: order.envelopes.map((e) => ({ key: e.aggregateId, value: JSON.stringify(e) })),
  });
  await producer.disconnect();
});
afterAll(async () => {
  await broker.close();
  await pool?.end();
  await proxy?.close();
  await dropCellTopics(cellId);
  await db?.drop();
});

describe('the projections database unreachable', () => {
  it('reads the batch again after a growing wait, not in a loop, and applies it once the database is back', async () => {
    proxy.down();
    const prefix = `outage-${cellId}/`;
    const consumer = createSourceConsumer({
      broker,
      source: cellId,
      topic,
      groupId: `reporting-${cellId}.${cellId}`,
      store: objectStoreFromConfig(
        testReporterConfig({ controlPlaneDatabaseUrl: db.url, prefix, groupPrefix: `reporting-${cellId}` }),
      ),
      root: prefix,
      pool,
      policy: { maxMessages: order.envelopes.length, maxAgeMs: 60_000 },
      log,
    });
    await consumer.start();
    try {
      await eventually(async () => failures.length >= 3, 'the batch to fail three times');
      await new Promise((r) => setTimeout(r, 4_000));
      // Waits of 0.1, 0.2, 0.4, 0.8, 1.6, then 2 s: a handful of attempts in these seconds, where reading the batch
      // again at once made hundreds.
      expect(failures.length).toBeLessThanOrEqual(10);
      expect(failures.map((f) => f.waitMs).slice(0, 5)).toEqual([100, 200, 400, 800, 1_600]);
      expect(Math.max(...failures.map((f) => f.waitMs))).toBeLessThanOrEqual(2_000);

      proxy.up();
      await eventually(
        async () =>
          (await db.query('SELECT 1 FROM reporting.orders WHERE order_id = $1', [order.orderId])).length === 1,
        'the order to be projected once the database is back',
      );
      await eventually(async () => (await broker.lag(`reporting-${cellId}.${cellId}`, [topic])) === 0, 'the commit');
      const attempts = failures.length;
      await new Promise((r) => setTimeout(r, 1_000));
      expect(failures.length).toBe(attempts);
    } finally {
      await consumer.stop();
    }
  });
});
