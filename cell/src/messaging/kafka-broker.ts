import type { Logger } from '@onsale/contracts';
import { type Consumer, Kafka, logLevel, type Producer } from 'kafkajs';
import type { Broker, ConsumerOptions, IncomingMessage, RunningConsumer } from './broker';

export interface KafkaBrokerOptions {
  brokers: string[];
  clientId: string;
  log: Logger;
  /** How long the group waits for a silent member (a crashed process) before reassigning its partitions. */
  sessionTimeoutMs?: number;
}

const headersOf = (raw: Record<string, unknown> | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) if (v !== undefined) out[k] = String(v);
  return out;
};

export function createKafkaBroker(options: KafkaBrokerOptions): Broker {
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    retry: { retries: 5, initialRetryTime: 200, maxRetryTime: 3_000 },
  });
  let producer: Promise<Producer> | null = null;
  const consumers = new Set<Consumer>();

  const connectProducer = () => {
    producer ??= (async () => {
      // Idempotent: a retried send after a lost acknowledgement is not written twice.
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
      await p.connect();
      return p;
    })().catch((err) => {
      producer = null;
      throw err;
    });
    return producer;
  };

  async function publish(topic: string, messages: { key: string; value: string; headers?: Record<string, string> }[]) {
    if (messages.length === 0) return;
    const p = await connectProducer();
    try {
      await p.send({ topic, acks: -1, messages });
    } catch (err) {
      // A producer that lost its broker may be wedged (sequence numbers, metadata): start afresh.
      producer = null;
      await p.disconnect().catch(() => {});
      throw err;
    }
  }

  async function consume(opts: ConsumerOptions): Promise<RunningConsumer> {
    const consumer = kafka.consumer({
      groupId: opts.groupId,
      allowAutoTopicCreation: false,
      sessionTimeout: options.sessionTimeoutMs ?? 10_000,
      heartbeatInterval: 1_000,
      maxWaitTimeInMs: 250,
      // After an outage longer than its retries, kafkajs restarts the consumer only if asked to.
      retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => true },
    });
    consumers.add(consumer);
    // A worker that starts while the broker is away waits for it instead of dying.
    for (let attempt = 1; ; attempt++) {
      try {
        await consumer.connect();
        await consumer.subscribe({ topics: opts.topics, fromBeginning: true });
        break;
      } catch (err) {
        options.log.warn('broker unavailable, consumer waiting', { groupId: opts.groupId, attempt, err });
        await consumer.disconnect().catch(() => {});
        await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * attempt)));
      }
    }
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 3,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale, pause }) => {
        let lastDone: string | null = null;
        try {
          for (const m of batch.messages) {
            if (!isRunning() || isStale()) break;
            const message: IncomingMessage = {
              topic: batch.topic,
              partition: batch.partition,
              offset: m.offset,
              key: m.key?.toString() ?? null,
              value: m.value?.toString() ?? '',
              headers: headersOf(m.headers as Record<string, unknown>),
            };
            const disposition = await opts.handle(message);
            if (disposition.kind === 'later') {
              // Hold this partition at this message until it is due.
              const resume = pause();
              consumer.seek({ topic: batch.topic, partition: batch.partition, offset: m.offset });
              setTimeout(resume, Math.max(0, disposition.at - Date.now())).unref();
              break;
            }
            resolveOffset(m.offset);
            lastDone = m.offset;
            await heartbeat();
          }
        } finally {
          // Offsets move only past messages whose effects are committed.
          if (lastDone !== null) {
            await consumer.commitOffsets([
              { topic: batch.topic, partition: batch.partition, offset: (BigInt(lastDone) + 1n).toString() },
            ]);
          }
        }
      },
    });
    consumer.on(consumer.events.CRASH, (e) => opts.onError?.(e.payload.error));
    return {
      async stop() {
        consumers.delete(consumer);
        await consumer.disconnect();
      },
    };
  }

  async function lag(groupId: string, topics: string[]) {
    const admin = kafka.admin();
    await admin.connect();
    try {
      let total = 0;
      const committed = await admin.fetchOffsets({ groupId, topics });
      for (const t of committed) {
        const ends = await admin.fetchTopicOffsets(t.topic);
        for (const p of t.partitions) {
          const end = ends.find((e) => e.partition === p.partition);
          const high = Number(end?.high ?? 0);
          const low = Number(end?.low ?? 0);
          const at = Number(p.offset) < 0 ? low : Number(p.offset);
          total += Math.max(0, high - at);
        }
      }
      return total;
    } finally {
      await admin.disconnect();
    }
  }

  return {
    publish,
    consume,
    lag,
    async close() {
      await Promise.all([...consumers].map((c) => c.disconnect().catch(() => {})));
      consumers.clear();
      const p = producer;
      producer = null;
      if (p) await (await p.catch(() => null))?.disconnect();
    },
  };
}

/** Creates a cell's topics if missing; the broker never auto-creates them. */
export async function provisionTopics(
  options: { brokers: string[]; log: Logger },
  topics: { topic: string; partitions: number; replicationFactor: number; configs?: Record<string, string> }[],
): Promise<string[]> {
  const kafka = new Kafka({ clientId: 'provision', brokers: options.brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((t) => !existing.has(t.topic));
    if (missing.length > 0) {
      await admin.createTopics({
        waitForLeaders: true,
        topics: missing.map((t) => ({
          topic: t.topic,
          numPartitions: t.partitions,
          replicationFactor: t.replicationFactor,
          configEntries: Object.entries(t.configs ?? {}).map(([name, value]) => ({ name, value })),
        })),
      });
    }
    return missing.map((t) => t.topic);
  } finally {
    await admin.disconnect();
  }
}

export async function deleteTopics(brokers: string[], topics: string[]): Promise<void> {
  const admin = new Kafka({ clientId: 'provision', brokers, logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.deleteTopics({ topics, timeout: 10_000 });
  } finally {
    await admin.disconnect();
  }
}
