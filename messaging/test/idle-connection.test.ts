import { randomUUID } from 'node:crypto';
import { createLogger } from '@onsale/contracts';
import { afterAll, expect, it, vi } from 'vitest';
import { kafkaBrokers } from '../../test/support/kafka';
import { createKafkaBroker, deleteTopics, provisionTopics } from '../src/kafka-broker';

const log = createLogger({ role: 'test' }, 'error');
const topic = `idle.${randomUUID().slice(0, 8)}`;
afterAll(() => deleteTopics(kafkaBrokers(), [topic]).catch(() => {}));

/**
 * kafkajs 2.2.4 re-armed a 1 ms timer on every connection for as long as it stayed open, even with nothing to send
 * (tulios/kafkajs#1704): a score of idle processes each burned a share of a core. The patch
 * (patches/kafkajs@2.2.4.patch) arms that timer only while a request waits.
 */
it('an idle connection arms no timer: a producer and the admin connection stay quiet between requests', async () => {
  await provisionTopics({ brokers: kafkaBrokers(), log }, [{ topic, partitions: 1, replicationFactor: 1 }]);
  const broker = createKafkaBroker({ brokers: kafkaBrokers(), clientId: 'idle', log });
  try {
    await broker.publish(topic, [{ key: 'k', value: 'v' }]);
    expect(await broker.depth(topic)).toBe(1);
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await new Promise<void>((resolve) => {
        // The spy's own wait is created through it: counted below as the one expected call.
        setTimeout(resolve, 1_000);
      });
      // Unpatched, each of the two connections re-arms its timer about once a millisecond: hundreds of calls.
      expect(timers.mock.calls.length).toBeLessThan(10);
    } finally {
      timers.mockRestore();
    }
    // The kept admin connection still answers.
    expect(await broker.depth(topic)).toBe(1);
  } finally {
    await broker.close();
  }
});
