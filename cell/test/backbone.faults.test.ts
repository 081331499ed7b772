import { cellTopics } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { describe, expect } from 'vitest';
import { startBundled } from '../../test/support/bundled';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';
import { eventually, kafkaBrokers, readTopic } from '../../test/support/kafka';
import { envelope, inject, outboxEvents, recordPaymentIntent } from '../../test/support/saga';
import { startCellWorkers } from '../../test/support/workers';

const it = cellTest({ prefix: 'flt', topics: true, seats: 400 });

const workerEnv = (cell: TestCell, extra: Record<string, string> = {}) => ({
  CELL_ID: cell.cellId,
  DATABASE_URL: cell.db.url,
  KAFKA_BROKERS: kafkaBrokers().join(','),
  KAFKA_SESSION_TIMEOUT_MS: '6000',
  LOG_LEVEL: 'error',
  ...extra,
});

/** `n` orders of one fresh seat each. */
async function holdOrders(hold: (n?: number) => Promise<{ orderId: string }>, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await hold()).orderId);
  return ids;
}

const countOf = async (cell: TestCell, orderIds: string[], type: string) =>
  (
    await cell.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM outbox WHERE aggregate_id = ANY($1::uuid[]) AND event_type = $2',
      [orderIds, type],
    )
  )[0]!.n;

const holdCreatedIds = async (cell: TestCell, orderIds: string[]) =>
  (
    await cell.db.query<{ event_id: string }>(
      `SELECT event_id FROM outbox WHERE aggregate_id = ANY($1::uuid[]) AND event_type = 'HoldCreated'`,
      [orderIds],
    )
  ).map((r) => r.event_id);

describe('faults at the backbone boundaries', () => {
  it('a relay crash after Kafka accepted the batch and before marking it: delivered twice, applied once', async ({
    cellId,
    cell,
    hold,
  }) => {
    const orders = await holdOrders(hold, 5);
    const crashing = await startBundled(
      'cell/src/relay/main.ts',
      workerEnv(cell, { FAILPOINTS: 'relay.after-publish=crash', RELAY_LEASE_MS: '1000' }),
    );
    expect(await crashing.exited).toBe(137);
    const unmarked = await cell.db.query(
      'SELECT 1 FROM outbox WHERE published_at IS NULL AND aggregate_id = ANY($1::uuid[])',
      [orders],
    );
    expect(unmarked).toHaveLength(5);

    const relay = await startBundled('cell/src/relay/main.ts', workerEnv(cell, { RELAY_LEASE_MS: '1000' }));
    await eventually(
      async () => (await cell.db.query('SELECT 1 FROM outbox WHERE published_at IS NULL')).length === 0,
      'the outbox to drain',
    );
    await relay.stop();

    const ids = new Set(await holdCreatedIds(cell, orders));
    const messages = (await readTopic(cellTopics(cellId).purchase, 10)).filter((m) =>
      ids.has(JSON.parse(m.value).eventId),
    );
    expect(messages).toHaveLength(10);
    for (const id of ids) expect(messages.filter((m) => JSON.parse(m.value).eventId === id)).toHaveLength(2);

    const workers = await startCellWorkers(cellId, cell.db.url, { saga: true });
    try {
      await eventually(async () => (await countOf(cell, orders, 'PaymentAuthorizationRequested')) >= 5, 'the saga');
      await new Promise((r) => setTimeout(r, 1_000));
      expect(await countOf(cell, orders, 'PaymentAuthorizationRequested')).toBe(5);
      const inbox = await cell.db.query(`SELECT 1 FROM inbox WHERE consumer = 'saga' AND event_id = ANY($1::uuid[])`, [
        [...ids],
      ]);
      expect(inbox).toHaveLength(5);
    } finally {
      await workers.stop();
    }
  });

  it('a consumer crash after its transaction committed and before the offset commit: the replay is a no-op', async ({
    cellId,
    cell,
    hold,
  }) => {
    const orders = await holdOrders(hold, 3);
    const relay = await startCellWorkers(cellId, cell.db.url, { relay: true });
    try {
      const crashing = await startBundled(
        'cell/src/saga/main.ts',
        workerEnv(cell, { FAILPOINTS: 'saga.after-commit=crash' }),
      );
      expect(await crashing.exited).toBe(137);
      // Partitions run concurrently, so one or more effects may have committed before the crash.
      const appliedBefore = await cell.db.query<{ event_id: string }>(
        `SELECT h.event_id FROM outbox h JOIN outbox p ON p.aggregate_id = h.aggregate_id
          WHERE h.event_type = 'HoldCreated' AND p.event_type = 'PaymentAuthorizationRequested'
            AND h.aggregate_id = ANY($1::uuid[])`,
        [orders],
      );
      expect(appliedBefore.length).toBeGreaterThanOrEqual(1);

      // None of their offsets was committed: each of those messages will come again.
      const admin = new Kafka({ clientId: 't', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING }).admin();
      await admin.connect();
      const [committed] = await admin.fetchOffsets({
        groupId: `${cellId}.saga`,
        topics: [cellTopics(cellId).purchase],
      });
      await admin.disconnect();
      const messages = await readTopic(cellTopics(cellId).purchase, 1_000, 3_000);
      for (const { event_id } of appliedBefore) {
        const m = messages.find((x) => JSON.parse(x.value).eventId === event_id)!;
        const at = Number(committed!.partitions.find((p) => p.partition === m.partition)!.offset);
        expect(at).toBeLessThanOrEqual(Number(m.offset));
      }

      const saga = await startBundled('cell/src/saga/main.ts', workerEnv(cell));
      await eventually(
        async () => (await countOf(cell, orders, 'PaymentAuthorizationRequested')) === 3,
        'the replay',
        60_000,
      );
      await new Promise((r) => setTimeout(r, 1_500));
      await saga.stop();
      expect(await countOf(cell, orders, 'PaymentAuthorizationRequested')).toBe(3);
    } finally {
      await relay.stop();
    }
  });

  it('the same event delivered ten times has one effect', async ({ cellId, cell, hold }) => {
    const [orderId] = await holdOrders(hold, 1);
    const [held] = await outboxEvents(cell, orderId!);
    const workers = await startCellWorkers(cellId, cell.db.url, { saga: true });
    try {
      await inject(workers.broker, cellId, { ...(held!.envelope as ReturnType<typeof envelope>) }, 10);
      await eventually(
        async () => (await countOf(cell, [orderId!], 'PaymentAuthorizationRequested')) === 1,
        'the saga',
      );
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await countOf(cell, [orderId!], 'PaymentAuthorizationRequested')).toBe(1);
    } finally {
      await workers.stop();
    }
  });

  it('a poison message goes to the dead-letter topic with its reason; the messages behind it are processed', async ({
    cellId,
    cell,
    hold,
  }) => {
    const [orderId] = await holdOrders(hold, 1);
    const [held] = await outboxEvents(cell, orderId!);
    const workers = await startCellWorkers(cellId, cell.db.url, { saga: true });
    try {
      const topic = cellTopics(cellId).purchase;
      await workers.broker.publish(topic, [
        { key: orderId!, value: 'garbage{' },
        {
          key: orderId!,
          value: JSON.stringify(envelope(cellId, 'HoldCreated', orderId!, { orderId: orderId! } as never)),
        },
        { key: orderId!, value: JSON.stringify(held!.envelope) },
      ]);
      await eventually(
        async () => (await countOf(cell, [orderId!], 'PaymentAuthorizationRequested')) === 1,
        'the message behind',
      );
      const dead = await readTopic(cellTopics(cellId).deadLetter, 2);
      const ours = dead.filter((m) => m.key === orderId);
      expect(ours.map((m) => m.value)).toEqual(['garbage{', expect.stringContaining('"HoldCreated"')]);
      expect(ours[0]!.headers['x-failure-reason']).toMatch(/SyntaxError/);
      expect(ours[1]!.headers['x-failure-reason']).toMatch(/invalid HoldCreated payload/);
      expect(JSON.parse(ours[0]!.headers['x-original-coordinates']!)).toMatchObject({ topic });
    } finally {
      await workers.stop();
    }
  });

  it('a transient failure is retried through the delay topics, then dead-lettered with its history', async ({
    cellId,
    cell,
    hold,
  }) => {
    const [orderId] = await holdOrders(hold, 1);
    const paymentIntentId = await recordPaymentIntent(cell, orderId!, 5_000);
    const workers = await startCellWorkers(cellId, cell.db.url, { saga: true });
    try {
      // A capture for an order that was never confirmed: the saga waits for the confirmation that never comes.
      const captured = envelope(cellId, 'PaymentCaptured', orderId!, {
        orderId: orderId!,
        paymentIntentId,
        amount: 5_000,
      });
      await inject(workers.broker, cellId, captured);
      const short = (await readTopic(cellTopics(cellId).retryShort, 20, 10_000)).filter((m) => m.key === orderId);
      const dead = await eventually(
        async () => (await readTopic(cellTopics(cellId).deadLetter, 10, 2_000)).find((m) => m.key === orderId),
        'the dead letter',
      );
      expect(short.map((m) => m.headers['x-retry-attempt'])).toEqual(['1', '2']);
      expect(dead!.headers['x-retry-attempt']).toBe('4');
      expect(dead!.headers['x-failure-reason']).toMatch(/capture seen before confirmation/);
      expect(JSON.parse(dead!.headers['x-original-coordinates']!).topic).toBe(cellTopics(cellId).purchase);
      expect(await cell.db.query(`SELECT 1 FROM inbox WHERE event_id = $1`, [captured.eventId])).toEqual([]);
    } finally {
      await workers.stop();
    }
  });

  it('a dead letter replayed after its cause is fixed is applied once, and a second replay changes nothing', async ({
    cellId,
    cell,
  }) => {
    const deadOrders = (await readTopic(cellTopics(cellId).deadLetter, 10, 2_000))
      .filter(
        (m) => m.headers['x-retry-consumer'] === 'saga' && /capture seen/.test(m.headers['x-failure-reason'] ?? ''),
      )
      .map((m) => m.key!);
    expect(deadOrders).toHaveLength(1);
    const orderId = deadOrders[0]!;
    // The fix: the confirmation the capture was waiting for.
    await cell.db.query(`UPDATE holds SET status = 'confirmed' WHERE order_id = $1`, [orderId]);
    await cell.db.query(`UPDATE orders SET status = 'confirmed' WHERE id = $1`, [orderId]);

    const workers = await startCellWorkers(cellId, cell.db.url, { saga: true });
    try {
      const replay = () =>
        startBundled('cell/src/ops/replay-dlq.ts', workerEnv(cell, { DLQ_CONSUMER: 'saga' })).then((p) => p.exited);
      expect(await replay()).toBe(0);
      await eventually(
        async () => (await countOf(cell, [orderId], 'TicketIssueRequested')) === 1,
        'the replayed capture',
      );
      expect(await replay()).toBe(0);
      await new Promise((r) => setTimeout(r, 1_500));
      expect(await countOf(cell, [orderId], 'TicketIssueRequested')).toBe(1);
      const [order] = await cell.db.query<{ status: string }>('SELECT status FROM orders WHERE id = $1', [orderId]);
      expect(order!.status).toBe('paid');
    } finally {
      await workers.stop();
    }
  });

  it('two relays draining one outbox at once publish every row', async ({ cellId, cell, hold }) => {
    const orders = await holdOrders(hold, 40);
    const [a, b] = await Promise.all([
      startCellWorkers(cellId, cell.db.url, { relay: true }),
      startCellWorkers(cellId, cell.db.url, { relay: true }),
    ]);
    try {
      await eventually(
        async () => (await cell.db.query('SELECT 1 FROM outbox WHERE published_at IS NULL')).length === 0,
        'both relays to drain the outbox',
      );
      const ids = new Set(await holdCreatedIds(cell, orders));
      // The topic also holds the poison messages of an earlier test: skip what is not JSON.
      const eventIdOf = (value: string): string | undefined => {
        try {
          return JSON.parse(value).eventId;
        } catch {
          return undefined;
        }
      };
      const published = (await readTopic(cellTopics(cellId).purchase, 10_000, 5_000))
        .map((m) => eventIdOf(m.value))
        .filter((id) => id && ids.has(id));
      expect(new Set(published)).toEqual(ids);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
