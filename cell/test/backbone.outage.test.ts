import { cellTopics } from '@onsale/contracts';
import { describe, expect, vi } from 'vitest';
import { startBundled } from '../../test/support/bundled';
import { admittedBuyer } from '../../test/support/buyer';
import type { TestCell } from '../../test/support/cell';
import { cellTest } from '../../test/support/fixtures';
import { eventually, kafkaBrokers, provisionCellTopics, readTopic } from '../../test/support/kafka';
import { ownServers } from '../../test/support/own-servers';
import { startCellWorkers } from '../../test/support/workers';

const it = cellTest({ prefix: 'out', seats: 500 });
const OUTAGE_MS = 30_000;

// The broker this file stops is its own: every helper (topics, workers, the reader) is pointed at it, the files
// beside this one keep theirs, and the cell's topics go with it.
const broker = ownServers('backbone-outage', { kafka: 18492 });
it.beforeAll(async () => {
  await broker.services('start', 'kafka');
  vi.stubEnv('KAFKA_BROKERS', broker.kafkaBrokers!);
}, 120_000);
it.afterAll(async () => {
  vi.unstubAllEnvs();
  await broker.remove();
});

const unpublished = async (cell: TestCell) =>
  (await cell.db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL'))[0]!.n;

describe('Kafka down for 30 s while buyers keep holding seats', () => {
  it('holds succeed, the outbox grows, and everything is published once the broker is back', async ({
    identity,
    cellId,
    cell,
    event,
  }) => {
    await provisionCellTopics(cellId);
    const relay = await startCellWorkers(cellId, cell.db.url, { relay: true });
    try {
      let seat = 0;
      const holdOne = async () => {
        const buyer = await admittedBuyer(identity, cell, event.eventId);
        return (await buyer.hold([event.seats[seat++]!.id])).status;
      };
      expect(await holdOne()).toBe(202);
      await eventually(async () => (await unpublished(cell)) === 0, 'the first event to be published');

      await broker.services('stop', 'kafka');
      // A worker that starts while the broker is away waits for it rather than dying.
      const saga = await startBundled('cell/src/saga/main.ts', {
        CELL_ID: cellId,
        DATABASE_URL: cell.db.url,
        KAFKA_BROKERS: kafkaBrokers().join(','),
        LOG_LEVEL: 'error',
      });
      try {
        const statuses: number[] = [];
        const until = Date.now() + OUTAGE_MS;
        while (Date.now() < until) {
          statuses.push(await holdOne());
          await new Promise((r) => setTimeout(r, 150));
        }
        expect(statuses.length).toBeGreaterThan(50);
        expect(statuses.every((s) => s === 202)).toBe(true);
        const stranded = await unpublished(cell);
        expect(stranded).toBe(statuses.length);

        await broker.services('start', 'kafka');
        const holds = statuses.length + 1;
        const requested = async () =>
          (await cell.db.query(`SELECT 1 FROM outbox WHERE event_type = 'PaymentAuthorizationRequested'`)).length;
        await eventually(async () => (await requested()) === holds, 'the saga to catch up', 120_000, 500);
        expect(saga.child.exitCode).toBeNull();
        await eventually(async () => (await unpublished(cell)) === 0, 'the outbox to drain', 60_000, 500);

        // Every fact committed during the outage is on the topic: each hold and each saga step after it.
        const rows = await cell.db.query<{ event_id: string }>('SELECT event_id FROM outbox');
        expect(rows).toHaveLength(2 * holds);
        const published = await readTopic(cellTopics(cellId).purchase, rows.length, 60_000);
        const ids = new Set(published.map((m) => JSON.parse(m.value).eventId));
        for (const { event_id } of rows) expect(ids.has(event_id)).toBe(true);
      } finally {
        await saga.stop();
      }
    } finally {
      await relay.stop();
    }
  });
});
