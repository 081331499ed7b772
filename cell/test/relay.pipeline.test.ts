import { randomUUID } from 'node:crypto';
import { createLogger } from '@onsale/contracts';
import type { Broker } from '@onsale/messaging/broker';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../test/support/db';
import {
  dropCellTopics,
  eventually,
  kafkaBrokers,
  provisionCellTopics,
  readTopic,
  uniqueCellId,
} from '../../test/support/kafka';
import { workerContext } from '../../test/support/workers';
import { migrateCell } from '../src/db/migrate';
import { EpochFencedError } from '../src/db/tx';
import { createRelay } from '../src/relay/relay';

const ORDERS = 6;
const EVENTS_PER_ORDER = 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: TestDatabase;
let cellId: string;
let broker: Broker;
/** Cells whose topics go once the shared producer is closed: it refreshes metadata for every topic it sent to. */
const cellsToDrop: string[] = [];

beforeAll(async () => {
  cellId = uniqueCellId('rly');
  db = await createTestDatabase('relay_pipeline');
  await migrateCell(db.url, cellId, 1);
  broker = createKafkaBroker({ brokers: kafkaBrokers(), clientId: 'relay-test', log: createLogger({}, 'error') });
});
afterAll(async () => {
  await broker?.close();
  for (const cell of [cellId, ...cellsToDrop]) await dropCellTopics(cell).catch(() => {});
  await db?.drop();
});

/** Orders' events written interleaved (order 0 seq 0, order 1 seq 0, ...), as concurrent sagas would. */
async function writeOutbox(topic: string) {
  const orders = Array.from({ length: ORDERS }, () => randomUUID());
  for (let seq = 0; seq < EVENTS_PER_ORDER; seq++)
    for (const orderId of orders)
      await db.query(
        `INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope) VALUES ($1, $2, 'HoldCreated', $3, $4::jsonb)`,
        [
          randomUUID(),
          orderId,
          topic,
          JSON.stringify({ eventId: randomUUID(), eventType: 'HoldCreated', correlationId: orderId, seq }),
        ],
      );
  return orders;
}

/** Each order's sequence numbers as its partition holds them. */
async function sequencesOnTopic(topic: string, count: number) {
  const byOrder = new Map<string, number[]>();
  for (const m of await readTopic(topic, count)) {
    const list = byOrder.get(m.key!) ?? [];
    list.push(JSON.parse(m.value).seq);
    byOrder.set(m.key!, list);
  }
  return byOrder;
}

const inOrder = Array.from({ length: EVENTS_PER_ORDER }, (_, i) => i);

describe('the relay pipelines claims and marks with its sends', () => {
  it('a pass sends batch after batch in claim order: every row marked, each order in the order written', async () => {
    const topics = await provisionCellTopics(cellId, 3);
    const orders = await writeOutbox(topics.purchase);
    const ctx = workerContext(cellId, db.url, 'relay-pipeline');
    const relay = createRelay(ctx, broker, { batchSize: 7, leaseMs: 30_000, idleMs: 5, retainPublishedMs: 60_000 });
    // Eight batches of 7 per pass, then the rest.
    expect(await relay.publishOnce()).toBe(56);
    expect(await relay.publishOnce()).toBe(ORDERS * EVENTS_PER_ORDER - 56);
    const [left] = await db.query<{ n: number }>(
      `SELECT ((SELECT count(*) FROM outbox WHERE published_at IS NULL)
             + (SELECT count(*) FROM relay_leases WHERE until > now()))::int AS n`,
    );
    expect(left!.n).toBe(0);
    const seqs = await sequencesOnTopic(topics.purchase, ORDERS * EVENTS_PER_ORDER);
    for (const o of orders) expect(seqs.get(o)).toEqual(inOrder);
    await ctx.database.close();
  });

  it('a failed send gives its batch and the one claimed behind it back at once; the next pass keeps each order in order', async () => {
    await db.query('DELETE FROM outbox');
    const faultCell = uniqueCellId('rlf');
    const topics = await provisionCellTopics(faultCell, 3);
    const orders = await writeOutbox(topics.purchase);
    const ctx = workerContext(cellId, db.url, 'relay-fault');
    // The real broker, with the second send refused before it reaches Kafka.
    let sends = 0;
    const failing: Broker = {
      ...broker,
      publish: async (topic, messages) => {
        if (++sends === 2) throw new Error('broker unreachable');
        await broker.publish(topic, messages);
      },
    };
    const options = { batchSize: 7, leaseMs: 30_000, idleMs: 5, retainPublishedMs: 60_000 };
    await expect(createRelay(ctx, failing, options).publishOnce()).rejects.toThrow('broker unreachable');
    const state = await db.query<{ published: number; leased: number }>(
      `SELECT count(*) FILTER (WHERE published_at IS NOT NULL)::int AS published,
              (SELECT count(*) FROM relay_leases WHERE until > now())::int AS leased FROM outbox`,
    );
    // The first batch went and is marked; nothing is left under a lease waiting for it to lapse.
    expect(state[0]).toEqual({ published: 7, leased: 0 });
    const relay = createRelay(ctx, broker, options);
    let published = 7;
    while (published < ORDERS * EVENTS_PER_ORDER) published += await relay.publishOnce();
    const seqs = await sequencesOnTopic(topics.purchase, ORDERS * EVENTS_PER_ORDER);
    for (const o of orders) expect(seqs.get(o)).toEqual(inOrder);
    await ctx.database.close();
    cellsToDrop.push(faultCell);
  });

  it('a lease keeps its rows from every other relay until it lapses; a relay whose lease lapsed marks nothing', async () => {
    await db.query('DELETE FROM outbox');
    const leaseCell = uniqueCellId('rll');
    const topics = await provisionCellTopics(leaseCell, 3);
    await writeOutbox(topics.purchase);
    const total = ORDERS * EVENTS_PER_ORDER;
    const ctx = workerContext(cellId, db.url, 'relay-lease');
    let resume!: () => void;
    const stalled = new Promise<void>((r) => {
      resume = r;
    });
    const stalling: Broker = {
      ...broker,
      publish: async (topic, messages) => {
        await stalled;
        await broker.publish(topic, messages);
      },
    };
    const options = { batchSize: 7, idleMs: 5, retainPublishedMs: 60_000 };
    // A claims its first batch, and the one behind it while the first send hangs: 14 rows under 1 s leases.
    const slow = createRelay(ctx, stalling, { ...options, leaseMs: 1_000 }).publishOnce();
    const fast = createRelay(ctx, broker, { ...options, batchSize: 1_000, leaseMs: 30_000 });
    const leased = async () =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM relay_leases WHERE until > now()'))[0]!.n;
    for (let i = 0; (await leased()) < 2 && i < 100; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await leased()).toBe(2);
    // While A's leases live, B claims every other row and none of A's.
    expect(await fast.publishOnce()).toBe(total - 14);
    const unpublished = async () =>
      (await db.query<{ id: string }>('SELECT id FROM outbox WHERE published_at IS NULL ORDER BY id')).map((r) => r.id);
    const first14 = (await db.query<{ id: string }>('SELECT id FROM outbox ORDER BY id LIMIT 14')).map((r) => r.id);
    expect(await unpublished()).toEqual(first14);
    // Once they lapse, B takes them.
    await new Promise((r) => setTimeout(r, 1_100));
    expect(await fast.publishOnce()).toBe(14);
    const markedByB = await db.query('SELECT id, published_at FROM outbox ORDER BY id');
    // A's sends then go through (duplicates the inboxes absorb), but its marks find no lease of its own.
    resume();
    await slow;
    expect(await db.query('SELECT id, published_at FROM outbox ORDER BY id')).toEqual(markedByB);
    expect(await leased()).toBe(0);
    await ctx.database.close();
    cellsToDrop.push(leaseCell);
  });

  it('relays claiming at once never claim the same row: each claim sees the leases committed before it', async () => {
    await db.query('DELETE FROM outbox');
    const raceCell = uniqueCellId('rlr');
    const topics = await provisionCellTopics(raceCell, 3);
    for (let i = 0; i < 5; i++) await writeOutbox(topics.purchase);
    const total = 5 * ORDERS * EVENTS_PER_ORDER;
    const sent: string[] = [];
    const recording: Broker = {
      ...broker,
      publish: async (topic, messages) => {
        for (const m of messages) sent.push(JSON.parse(m.value).eventId);
        await broker.publish(topic, messages);
      },
    };
    const ctx = workerContext(cellId, db.url, 'relay-race');
    const options = { batchSize: 3, leaseMs: 30_000, idleMs: 5, retainPublishedMs: 60_000 };
    const relays = Array.from({ length: 4 }, () => createRelay(ctx, recording, options));
    await Promise.all(
      relays.map(async (relay) => {
        while ((await relay.publishOnce()) > 0);
      }),
    );
    expect(sent).toHaveLength(total);
    expect(new Set(sent).size).toBe(total);
    await ctx.database.close();
    cellsToDrop.push(raceCell);
  });

  it('a relay whose epoch was fenced claims nothing and says which epoch fenced it', async () => {
    await db.query('DELETE FROM outbox');
    await writeOutbox('unused.topic');
    // A promotion elsewhere took this cell to epoch 2; a relay that still holds epoch 1 must not claim.
    const fencedCell = uniqueCellId('rlx');
    await db.query('INSERT INTO cell_epoch (cell_id, epoch) VALUES ($1, 2)', [fencedCell]);
    const options = { batchSize: 7, leaseMs: 30_000, idleMs: 5, retainPublishedMs: 60_000 };
    for (const [cell, current] of [
      [fencedCell, 2],
      [uniqueCellId('rln'), null],
    ] as const) {
      const ctx = workerContext(cell, db.url, 'relay-fenced');
      const refused = await createRelay(ctx, broker, options)
        .publishOnce()
        .catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(EpochFencedError);
      expect(refused).toMatchObject({ cellId: cell, expected: 1, current });
      await ctx.database.close();
    }
    const state = await db.query<{ unpublished: number; leases: number }>(
      `SELECT count(*) FILTER (WHERE published_at IS NULL)::int AS unpublished,
              (SELECT count(*) FROM relay_leases)::int AS leases FROM outbox`,
    );
    expect(state[0]).toEqual({ unpublished: ORDERS * EVENTS_PER_ORDER, leases: 0 });
  });
});

describe('a started relay', () => {
  it('passes every idleMs while rows come, every quietMs once none came for 2 s, and fast again when one comes', async () => {
    await db.query('DELETE FROM outbox');
    const quietCell = uniqueCellId('rlq');
    cellsToDrop.push(quietCell);
    const topics = await provisionCellTopics(quietCell, 3);
    const ctx = workerContext(cellId, db.url, 'relay-quiet');
    const passes: number[] = [];
    const relay = createRelay(ctx, broker, {
      batchSize: 7,
      leaseMs: 30_000,
      idleMs: 5,
      quietMs: 400,
      retainPublishedMs: 60_000,
      onPass: () => passes.push(Date.now()),
    });
    const passesIn = (from: number, ms: number) => passes.filter((t) => t >= from && t < from + ms).length;
    const startedAt = Date.now();
    const loop = relay.start();
    try {
      await sleep(3_500);
      // Nothing published since the start: from 2 s on, one pass per 400 ms (a loaded machine passes fewer).
      expect(passesIn(startedAt + 2_300, 1_200)).toBeLessThanOrEqual(4);
      await writeOutbox(topics.purchase);
      await eventually(
        async () => (await db.query('SELECT 1 FROM outbox WHERE published_at IS NULL')).length === 0,
        'the rows published',
      );
      const publishedAt = Date.now();
      await sleep(1_000);
      // Rows came: back to one pass per 5 ms; even a loaded machine passes far more often than a quiet relay would.
      expect(passesIn(publishedAt, 1_000)).toBeGreaterThan(10);
    } finally {
      await loop.stop();
      await ctx.database.close();
    }
  });
});
