import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { cellTopics } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../scripts/local-platform/process';
import { startBundled } from '../../test/support/bundled';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import { dropCellTopics, eventually, kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { paidOrderSaga } from '../../test/support/sale-events';
import { serviceEnv } from '../../test/support/services';
import { createObjectStore } from '../src/s3';

/**
 * The reporting consumer process killed (SIGKILL) after a batch's objects and projections are
 * durable and before its offset commit, then started again in the same consumer groups.
 * One partition and one order (8 messages) per batch make the batches known in advance.
 */
const cellId = uniqueCellId('kill');
const sale = { tenantId: `tenant-${cellId}`, eventId: randomUUID() };
const prefix = `crash-${cellId}/`;
const groupPrefix = `reporting-${cellId}`;
const topic = cellTopics(cellId).purchase;
const orders = [0, 1, 2].map((i) => paidOrderSaga(cellId, sale, i));
const env = serviceEnv();
const store = createObjectStore({
  endpoint: env.S3_ENDPOINT,
  bucket: env.S3_BUCKET!,
  region: env.S3_REGION!,
  accessKeyId: env.S3_ACCESS_KEY_ID,
  secretAccessKey: env.S3_SECRET_ACCESS_KEY,
});
const kafka = new Kafka({ clientId: 'reporting-crash-test', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
let db: TestDatabase;
let pool: pg.Pool;

const consumer = (extra: Record<string, string> = {}) =>
  startBundled(
    'reporting/src/main.ts',
    {
      ...env,
      DATABASE_URL_CONTROL_PLANE: db.url,
      REPORTING_PREFIX: prefix,
      REPORTING_GROUP_PREFIX: groupPrefix,
      // Batches are cut by size only: the age limit never fires during the test.
      FLUSH_MAX_MESSAGES: '8',
      FLUSH_MAX_AGE_MS: '600000',
      REGISTRY_POLL_MS: '300',
      LOG_LEVEL: 'warn',
      ...extra,
    },
    { name: 'reporting', logFile: resolve(repoRoot, `.data/test-logs/${cellId}-reporting.log`) },
  );

async function committed(): Promise<number> {
  const [t] = await admin.fetchOffsets({ groupId: `${groupPrefix}.${cellId}`, topics: [topic] });
  return Number(t!.partitions[0]!.offset);
}

async function objects() {
  const keys = (await store.list(prefix)).sort();
  return Object.fromEntries(
    await Promise.all(keys.map(async (k) => [k, Buffer.from((await store.get(k))!).toString('base64')])),
  );
}

const projections = async () => ({
  orders: (await pool.query('SELECT * FROM reporting.orders WHERE tenant_id = $1 ORDER BY order_id', [sale.tenantId]))
    .rows,
  totals: (
    await pool.query(
      `SELECT sum(holds)::int AS holds, sum(paid_orders)::int AS paid, sum(seats_sold)::int AS seats,
              sum(gross)::int AS gross FROM reporting.minutes WHERE tenant_id = $1`,
      [sale.tenantId],
    )
  ).rows[0],
  funnel: (
    await pool.query('SELECT held::int, paid::int, ticketed::int FROM reporting.funnel WHERE tenant_id = $1', [
      sale.tenantId,
    ])
  ).rows[0],
});

beforeAll(async () => {
  db = await createTestDatabase('rep_crash', 'control-plane');
  pool = new pg.Pool({ connectionString: db.url, max: 2 });
  await db.query(
    `INSERT INTO cells (id, base_url, region, kafka_brokers) VALUES ($1, 'http://127.0.0.1:9', 'local', $2)`,
    [cellId, kafkaBrokers().join(',')],
  );
  await provisionCellTopics(cellId, 1);
  await admin.connect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: orders.flatMap((o) => o.envelopes).map((e) => ({ key: e.aggregateId, value: JSON.stringify(e) })),
  });
  await producer.disconnect();
});
afterAll(async () => {
  await admin.disconnect();
  await pool?.end();
  await dropCellTopics(cellId);
  await db?.drop();
});

describe('reporting consumer killed between an upload and its offset commit', () => {
  it('restarted in the same groups: objects byte-identical, projections unchanged, nothing counted twice', async () => {
    const killed = await consumer({ FAILPOINT_KILL_BEFORE_COMMIT: `${cellId}@2` });
    await killed.exited;
    expect(killed.child.signalCode).toBe('SIGKILL');
    // The second batch (offsets 8-15) is in S3 and in the projections; its offsets are not committed.
    expect(await committed()).toBe(8);
    const date = new Date().toISOString().slice(0, 10);
    const batch2 = `${prefix}facts/tenant=${sale.tenantId}/event=${sale.eventId}/date=${date}/cell=${cellId}/${topic}-p0-${'8'.padStart(20, '0')}-${'15'.padStart(20, '0')}.parquet`;
    const afterCrash = await objects();
    expect(Object.keys(afterCrash)).toContain(batch2);
    const projectedAtCrash = await projections();
    expect(projectedAtCrash.orders.map((o) => o.order_id).sort()).toEqual(
      orders
        .slice(0, 2)
        .map((o) => o.orderId)
        .sort(),
    );

    const restarted = await consumer();
    try {
      await eventually(async () => (await committed()) === 24, 'the restarted consumer caught up', 60_000, 200);
    } finally {
      await restarted.stop();
    }
    const afterRestart = await objects();
    for (const [key, bytes] of Object.entries(afterCrash)) expect(afterRestart[key], key).toBe(bytes);
    const final = await projections();
    // The two orders projected before the kill are untouched by the replay...
    for (const row of projectedAtCrash.orders) expect(final.orders).toContainEqual(row);
    // ...and every total counts each order exactly once.
    expect(final.totals).toEqual({
      holds: 3,
      paid: 3,
      seats: orders.reduce((n, o) => n + o.seats, 0),
      gross: orders.reduce((n, o) => n + o.amount, 0),
    });
    expect(final.funnel).toEqual({ held: 3, paid: 3, ticketed: 3 });
  });
});
