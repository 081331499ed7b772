import { randomUUID } from 'node:crypto';
import { createLogger } from '@onsale/contracts';
import { afterAll, describe, expect, it } from 'vitest';
import { eventually, kafkaBrokers } from '../../test/support/kafka';
import type { Broker, IncomingMessage } from '../src/broker';
import { createKafkaBroker, deleteTopics, provisionTopics } from '../src/kafka-broker';

/**
 * What every transport behind the Broker interface must do. A PostgreSQL-backed transport
 * added later runs these same tests by adding itself to `transports`.
 */
const transports: [string, () => Broker, (topics: string[]) => Promise<void>, (topics: string[]) => Promise<void>][] = [
  [
    'kafka',
    () =>
      createKafkaBroker({
        brokers: kafkaBrokers(),
        clientId: 'contract',
        log: createLogger({ role: 'test' }, 'error'),
      }),
    async (topics) => {
      await provisionTopics(
        { brokers: kafkaBrokers(), log: createLogger({ role: 'test' }, 'error') },
        topics.map((topic) => ({ topic, partitions: 2, replicationFactor: 1 })),
      );
    },
    (topics) => deleteTopics(kafkaBrokers(), topics),
  ],
];

describe.each(transports)('broker contract: %s', (_name, make, createTopics, removeTopics) => {
  const created: string[] = [];
  const topic = async () => {
    const t = `contract.${randomUUID().slice(0, 8)}`;
    await createTopics([t]);
    created.push(t);
    return t;
  };
  afterAll(() => removeTopics(created).catch(() => {}));

  it('delivers every message of a key in the order it was published', async () => {
    const broker = make();
    const t = await topic();
    const seen: IncomingMessage[] = [];
    const values = Array.from({ length: 30 }, (_, i) => ({ key: `k${i % 3}`, value: String(i) }));
    await broker.publish(t, values);
    const consumer = await broker.consume({
      groupId: `g-${randomUUID()}`,
      topics: [t],
      handle: async (m) => {
        seen.push(m);
        return { kind: 'done' };
      },
    });
    await eventually(async () => seen.length >= 30, 'all messages');
    for (const key of ['k0', 'k1', 'k2']) {
      const mine = seen.filter((m) => m.key === key).map((m) => Number(m.value));
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
      expect(mine).toHaveLength(10);
    }
    await consumer.stop();
    await broker.close();
  });

  it('redelivers what was not done to the next member of the group, and only that', async () => {
    const broker = make();
    const t = await topic();
    const group = `g-${randomUUID()}`;
    await broker.publish(
      t,
      [1, 2, 3, 4].map((i) => ({ key: 'same', value: String(i) })),
    );
    const first: string[] = [];
    const c1 = await broker.consume({
      groupId: group,
      topics: [t],
      handle: async (m) => {
        // This member never finishes message 3 (as if it died on it); the next member must get it.
        if (m.value === '3') return { kind: 'later', at: Date.now() + 600_000 };
        first.push(m.value);
        return { kind: 'done' };
      },
    });
    await eventually(async () => first.length === 2, 'the first two');
    await c1.stop();
    await broker.close();

    const again = make();
    const second: string[] = [];
    const c2 = await again.consume({
      groupId: group,
      topics: [t],
      handle: async (m) => {
        second.push(m.value);
        return { kind: 'done' };
      },
    });
    await eventually(async () => second.length >= 2, 'the rest', 40_000);
    expect(second).toEqual(['3', '4']);
    await c2.stop();
    await again.close();
  });

  it('holds a partition at a message that is not yet due, then delivers it', async () => {
    const broker = make();
    const t = await topic();
    await broker.publish(t, [
      { key: 'same', value: 'wait' },
      { key: 'same', value: 'behind' },
    ]);
    const seen: { value: string; at: number }[] = [];
    const due = Date.now() + 1_500;
    const consumer = await broker.consume({
      groupId: `g-${randomUUID()}`,
      topics: [t],
      handle: async (m) => {
        if (m.value === 'wait' && Date.now() < due) return { kind: 'later', at: due };
        seen.push({ value: m.value, at: Date.now() });
        return { kind: 'done' };
      },
    });
    await eventually(async () => seen.length === 2, 'both');
    expect(seen.map((s) => s.value)).toEqual(['wait', 'behind']);
    expect(seen[0]!.at).toBeGreaterThanOrEqual(due);
    await consumer.stop();
    await broker.close();
  });

  it('replays a partition from an offset it held, once the wait is over', async () => {
    const broker = make();
    const t = await topic();
    await broker.publish(t, [{ key: 'same', value: 'fails once' }]);
    const seen: { offset: string; at: number }[] = [];
    const due = Date.now() + 1_500;
    const consumer = await broker.consume({
      groupId: `g-${randomUUID()}`,
      topics: [t],
      handle: async (m) => {
        seen.push({ offset: m.offset, at: Date.now() });
        return seen.length === 1 ? { kind: 'replay', from: m.offset, at: due } : { kind: 'held' };
      },
    });
    await eventually(async () => seen.length === 2, 'the message delivered again');
    expect(seen[1]!.offset).toBe(seen[0]!.offset);
    expect(seen[1]!.at).toBeGreaterThanOrEqual(due);
    await consumer.stop();
    await broker.close();
  });

  it('a replay whose wait outlasts its consumer ends quietly', async () => {
    // The consumer stops (as the client stops it to restart after an outage, or a worker shuts down) while a partition
    // waits to be replayed: the wait's end finds no group to resume, and must not throw where nothing catches it. A
    // reporting consumer exited so whenever its broker went away during a failed batch's backoff.
    const uncaught: unknown[] = [];
    const record = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', record);
    try {
      const broker = make();
      const t = await topic();
      await broker.publish(t, [{ key: 'same', value: 'fails' }]);
      let due = 0;
      const consumer = await broker.consume({
        groupId: `g-${randomUUID()}`,
        topics: [t],
        handle: async (m) => {
          // Longer than a stop takes (it waits for the fetch in flight, up to a heartbeat interval).
          due = Date.now() + 3_000;
          return { kind: 'replay', from: m.offset, at: due };
        },
      });
      await eventually(async () => due > 0, 'the message delivered');
      await consumer.stop();
      expect(Date.now()).toBeLessThan(due);
      await new Promise((r) => setTimeout(r, due - Date.now() + 500));
      expect(uncaught).toEqual([]);
      await broker.close();
    } finally {
      process.off('uncaughtException', record);
    }
  });

  it('reports the lag of a group that has not read', async () => {
    const broker = make();
    const t = await topic();
    await broker.publish(
      t,
      Array.from({ length: 7 }, (_, i) => ({ key: `k${i}`, value: 'x' })),
    );
    expect(await broker.lag(`g-${randomUUID()}`, [t])).toBe(7);
    await broker.close();
  });
});
