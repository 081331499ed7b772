import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { cellTopicSpecs } from '@onsale/cell/messaging/topology';
import { cellTopics, createLogger } from '@onsale/contracts';
import { deleteTopics, provisionTopics } from '@onsale/messaging/kafka-broker';
import { Kafka, logLevel } from 'kafkajs';
import { repoRoot, serviceEnv } from './services';

export const kafkaBrokers = () => serviceEnv().KAFKA_BROKERS!.split(',');

/** A cell id of its own for one test file, so its topics and consumer groups are its own too. */
export const uniqueCellId = (prefix = 't') => `${prefix}${randomUUID().slice(0, 8)}`;

export async function provisionCellTopics(cellId: string, partitions = 3) {
  await provisionTopics(
    { brokers: kafkaBrokers(), log: createLogger({ role: 'test' }) },
    cellTopicSpecs(cellId, partitions, 1),
  );
  return cellTopics(cellId);
}

export async function dropCellTopics(cellId: string, brokers = kafkaBrokers()) {
  await deleteTopics(brokers, Object.values(cellTopics(cellId))).catch(() => {});
}

export interface ReadMessage {
  partition: number;
  offset: string;
  key: string | null;
  value: string;
  headers: Record<string, string>;
}

/** Reads a topic from the beginning with a throwaway group until `count` messages or the timeout. */
export async function readTopic(topic: string, count: number, timeoutMs = 20_000): Promise<ReadMessage[]> {
  const kafka = new Kafka({ clientId: 'test-reader', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: `reader-${randomUUID()}`, maxWaitTimeInMs: 100 });
  const seen: ReadMessage[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let done: () => void = () => {};
  const finished = new Promise<void>((r) => {
    done = r;
  });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) if (v !== undefined) headers[k] = String(v);
      seen.push({
        partition,
        offset: message.offset,
        key: message.key?.toString() ?? null,
        value: message.value?.toString() ?? '',
        headers,
      });
      if (seen.length >= count) done();
    },
  });
  const timer = setTimeout(done, timeoutMs);
  await finished;
  clearTimeout(timer);
  await consumer.disconnect();
  return seen;
}

/** Waits until `probe` returns a truthy value, polling; fails with `what` after the timeout. */
export async function eventually<T>(
  probe: () => Promise<T>,
  what: string,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<Exclude<T, null | undefined | false | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Exclude<T, null | undefined | false | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Freezes (SIGSTOP: connections stay open, nothing answers) or thaws the broker `scripts/services` started: the
 * shared one, or the one kept in `data` (a drill's own servers).
 */
export function signalKafka(signal: 'SIGSTOP' | 'SIGCONT', data = resolve(repoRoot, '.data')): void {
  try {
    process.kill(Number(readFileSync(resolve(data, 'kafka/kafka.pid'), 'utf8').trim()), signal);
  } catch {}
}
