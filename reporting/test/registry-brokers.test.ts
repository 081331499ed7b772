import { randomUUID } from 'node:crypto';
import { cellTopics, createLogger, type LogFields, type Logger } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness } from '../../test/support/control-plane';
import { eventually, uniqueCellId } from '../../test/support/kafka';
import { paidOrderSaga } from '../../test/support/sale-events';
import { serviceEnv } from '../../test/support/services';
import { startReporter } from '../src/reporter';
import { testReporterConfig } from './support';

/**
 * Cells share no broker with the control plane: the reporting consumer's own KAFKA_BROKERS is the
 * control plane's cluster, and each cell's purchase topic lives on the cell's cluster, which only
 * the cell's registry entry names. KAFKA_BROKERS_CELL_C2 is a broker of its own (the local services
 * run one per cell); on a machine whose services predate that, the test falls back to the one
 * shared broker, where it still checks the registry path but could not catch a reader that ignores it.
 */
const env = serviceEnv();
const controlPlaneBrokers = env.KAFKA_BROKERS!;
const cellBrokers = process.env.KAFKA_BROKERS_CELL_C2 ?? env.KAFKA_BROKERS_CELL_C2 ?? controlPlaneBrokers;

const client = (brokers: string) =>
  new Kafka({ clientId: 'registry-brokers-test', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
/** Topics made by this file, by broker list, dropped at the end. */
const made: [string, string][] = [];

/** A cell's purchase topic on `brokers`, holding `n` paid orders of one sale; returns what they sold. */
async function salesOn(brokers: string, cellId: string, n: number, first = 0) {
  const topic = cellTopics(cellId).purchase;
  const sale = { tenantId: `tenant-${cellId}-${first}`, eventId: randomUUID() };
  const orders = Array.from({ length: n }, (_, i) => paidOrderSaga(cellId, sale, first + i));
  const kafka = client(brokers);
  const admin = kafka.admin();
  await admin.connect();
  if (!(await admin.listTopics()).includes(topic)) {
    await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 2, replicationFactor: 1 }] });
    made.push([brokers, topic]);
  }
  await admin.disconnect();
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  await producer.send({
    topic,
    acks: -1,
    messages: orders.flatMap((o) => o.envelopes).map((e) => ({ key: e.aggregateId, value: JSON.stringify(e) })),
  });
  await producer.disconnect();
  return {
    tenantId: sale.tenantId,
    paid: n,
    seats: orders.reduce((s, o) => s + o.seats, 0),
    gross: orders.reduce((s, o) => s + o.amount, 0),
  };
}

async function topicsOn(brokers: string) {
  const admin = client(brokers).admin();
  await admin.connect();
  try {
    return await admin.listTopics();
  } finally {
    await admin.disconnect();
  }
}

/** Warnings the reporter logged, kept for the test to read. */
const warnings: { msg: string; fields?: LogFields }[] = [];
const quiet = createLogger({ role: 'reporting-test' }, 'error');
const log: Logger = { ...quiet, warn: (msg, fields) => warnings.push({ msg, fields }), child: () => log };

let h: Harness;
let reporter: Awaited<ReturnType<typeof startReporter>>;

/** What the projections say a tenant sold: paid orders, seats and gross, to the cent. */
async function projected(tenantId: string) {
  const r = await reporter.pool.query<{ paid: number; seats: number; gross: number }>(
    `SELECT coalesce(sum(paid_orders), 0)::int AS paid, coalesce(sum(seats_sold), 0)::int AS seats,
            coalesce(sum(gross), 0)::int AS gross
       FROM reporting.minutes WHERE tenant_id = $1`,
    [tenantId],
  );
  return r.rows[0]!;
}

const registered = (id: string, extra: Record<string, unknown> = {}) =>
  addCell(h, id, 'http://127.0.0.1:9', { region: 'local', ...extra });

beforeAll(async () => {
  h = await createHarness();
  // Its KAFKA_BROKERS is the services' KAFKA_BROKERS: the control plane's broker.
  reporter = await startReporter(
    testReporterConfig({
      controlPlaneDatabaseUrl: h.config.DATABASE_URL_CONTROL_PLANE,
      prefix: `registry-brokers-${randomUUID().slice(0, 8)}/`,
      groupPrefix: `reporting-registry-${randomUUID().slice(0, 8)}`,
    }),
    log,
  );
});
afterAll(async () => {
  await reporter?.stop();
  for (const [brokers, topic] of made) {
    const admin = client(brokers).admin();
    await admin.connect();
    await admin.deleteTopics({ topics: [topic], timeout: 10_000 }).catch(() => {});
    await admin.disconnect();
  }
  await h?.close();
});

describe("the reporting consumer reaches each cell's broker through the cell registry", () => {
  it("projects, to the cent, a cell's sales on the cell's own broker, registered while it runs", async () => {
    const cellId = uniqueCellId('own');
    const sold = await salesOn(cellBrokers, cellId, 4);
    if (cellBrokers !== controlPlaneBrokers) {
      // The old wiring read every cell through the reporter's own brokers, where this topic does not exist.
      expect(await topicsOn(controlPlaneBrokers)).not.toContain(cellTopics(cellId).purchase);
    }
    await registered(cellId, { kafkaBrokers: cellBrokers });
    await eventually(
      async () =>
        JSON.stringify(await projected(sold.tenantId)) ===
        JSON.stringify({ paid: 4, seats: sold.seats, gross: sold.gross }),
      `${cellId}'s sales projected`,
      30_000,
      200,
    );
    expect(await projected(sold.tenantId)).toEqual({ paid: sold.paid, seats: sold.seats, gross: sold.gross });
    expect(reporter.sources()).toContain(cellId);
  });

  it('skips a cell with no broker in its entry, with a warning naming it, until the operator sets one', async () => {
    const cellId = uniqueCellId('nobrk');
    const sold = await salesOn(cellBrokers, cellId, 2);
    await registered(cellId);
    await eventually(
      async () => warnings.some((w) => w.fields?.cellId === cellId && /no broker list/.test(w.msg)),
      `a warning naming ${cellId}`,
    );
    // Several registry polls later it is still not read, from the control plane's brokers or any other.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(reporter.sources()).not.toContain(cellId);
    expect(await projected(sold.tenantId)).toEqual({ paid: 0, seats: 0, gross: 0 });
    // Warned once, not at every poll.
    expect(warnings.filter((w) => w.fields?.cellId === cellId)).toHaveLength(1);

    const set = await h.req('PATCH', `/operator/cells/${cellId}`, {
      token: h.operatorToken,
      body: { kafkaBrokers: cellBrokers },
    });
    expect(set.status).toBe(200);
    await eventually(
      async () => (await projected(sold.tenantId)).gross === sold.gross,
      `${cellId}'s sales once its entry names its broker`,
      30_000,
      200,
    );
    expect(await projected(sold.tenantId)).toEqual({ paid: sold.paid, seats: sold.seats, gross: sold.gross });
  });

  it('moves a cell it is reading to the broker list its entry is changed to (a failover)', async () => {
    const cellId = uniqueCellId('move');
    const before = await salesOn(controlPlaneBrokers, cellId, 1);
    await registered(cellId, { kafkaBrokers: controlPlaneBrokers });
    await eventually(async () => (await projected(before.tenantId)).paid === 1, `${cellId} read on its first brokers`);

    const after = await salesOn(cellBrokers, cellId, 3, 10);
    const moved = await h.req('PATCH', `/operator/cells/${cellId}`, {
      token: h.operatorToken,
      body: { kafkaBrokers: cellBrokers },
    });
    expect(moved.status).toBe(200);
    await eventually(
      async () => (await projected(after.tenantId)).gross === after.gross,
      `${cellId} read on the brokers its entry was changed to`,
      30_000,
      200,
    );
    expect(await projected(after.tenantId)).toEqual({ paid: after.paid, seats: after.seats, gross: after.gross });
    expect(await projected(before.tenantId)).toEqual({ paid: 1, seats: before.seats, gross: before.gross });
  });
});
