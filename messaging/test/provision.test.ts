import { randomUUID } from 'node:crypto';
import { createLogger } from '@onsale/contracts';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ownServers } from '../../test/support/own-servers';
import { provisionTopics } from '../src/kafka-broker';

const log = createLogger({ role: 'test' }, 'error');
// A broker of its own, started for this file: the fault lives in a broker's first moments.
const broker = ownServers('provision', { kafka: 18192 });
const brokers = () => [broker.kafkaBrokers!];
beforeAll(() => broker.services('start', 'kafka'), 120_000);
afterAll(() => broker.remove());

/**
 * A platform's start provisions its cells' topics at once, on a broker started moments before. Such a
 * broker answers a metadata read for a topic it has just created with UNKNOWN_TOPIC_OR_PARTITION, which
 * kafkajs's own wait for leaders does not wait out: before provisioning retried, starts
 * here failed with it, as two platforms' starts once did in CI.
 */
it('provisions fresh topics from three starts at once on a new broker: each returns, every partition has a leader', async () => {
  const admin = new Kafka({ clientId: 'check', brokers: brokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    for (let round = 0; round < 3; round++) {
      const topics = Array.from({ length: 12 }, (_, i) => ({
        topic: `provision.${randomUUID().slice(0, 8)}.${i}`,
        partitions: 12,
        replicationFactor: 1,
      }));
      const created = await Promise.all([1, 2, 3].map(() => provisionTopics({ brokers: brokers(), log }, topics)));
      // Reported as lacking by whichever start created it, at least.
      expect(new Set(created.flat())).toEqual(new Set(topics.map((t) => t.topic)));

      const meta = await admin.fetchTopicMetadata({ topics: topics.map((t) => t.topic) });
      for (const t of meta.topics) {
        expect(t.partitions, t.name).toHaveLength(12);
        expect(
          t.partitions.every((p) => p.leader >= 0),
          t.name,
        ).toBe(true);
      }
    }
  } finally {
    await admin.disconnect();
  }
}, 120_000);
