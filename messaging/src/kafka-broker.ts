import type { kafkaSecurity } from '@onsale/aws-auth';
import { type Logger, metrics } from '@onsale/contracts';
import { type Admin, type Consumer, Kafka, logLevel, type Producer } from 'kafkajs';
import type {
  Broker,
  ConsumerHealth,
  ConsumerOptions,
  IncomingMessage,
  PartitionControl,
  RunningConsumer,
} from './broker';
import { keyPartitioner } from './partitioner';

export interface KafkaBrokerOptions {
  brokers: string[];
  clientId: string;
  log: Logger;
  group?: Partial<GroupSettings>;
  /** TLS and SASL for a secured cluster (MSK IAM); absent: plaintext, as the local broker speaks. */
  security?: ReturnType<typeof kafkaSecurity>;
}

/** How a consumer lives in its group; from each process's configuration (KAFKA_*). */
export interface GroupSettings {
  /** How long the group waits for a silent member (a crashed process) before reassigning its partitions. */
  sessionTimeoutMs: number;
  heartbeatIntervalMs: number;
  /** How long the group waits for every member to rejoin during a rebalance. */
  rebalanceTimeoutMs: number;
}
const defaultGroup: GroupSettings = {
  sessionTimeoutMs: 10_000,
  heartbeatIntervalMs: 1_000,
  rebalanceTimeoutMs: 30_000,
};

/** Errors that mean this member is no longer (or not yet) the group's: rejoin, never die. */
const MEMBERSHIP_ERRORS = new Set([
  'UNKNOWN_MEMBER_ID',
  'ILLEGAL_GENERATION',
  'REBALANCE_IN_PROGRESS',
  'NOT_COORDINATOR',
  'COORDINATOR_NOT_AVAILABLE',
  'FENCED_INSTANCE_ID',
]);
const isMembershipError = (err: unknown): boolean => {
  for (let e = err as { type?: string; cause?: unknown } | undefined; e; e = e.cause as typeof e) {
    if (e.type && MEMBERSHIP_ERRORS.has(e.type)) return true;
  }
  return false;
};
const errorText = (err: unknown) => (err instanceof Error ? `${err.name}: ${err.message}` : String(err));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const headersOf = (raw: Record<string, unknown> | undefined): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw ?? {})) if (v !== undefined) out[k] = String(v);
  return out;
};

/** Runs `read` until it succeeds, waiting out errors Kafka marks retriable (up to 10 attempts, about 17 s). */
async function retryingRetriable<T>(read: () => Promise<T>, onRetry?: (attempt: number, err: Error) => void) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await read();
    } catch (err) {
      if (!(err as { retriable?: boolean }).retriable || attempt >= 10) throw err;
      onRetry?.(attempt, err as Error);
      await sleep(300 * attempt);
    }
  }
}

/** A topic's offsets; a topic created moments ago may have no partition leader yet (retriable): waited out. */
const topicOffsets = (admin: Admin, topic: string) => retryingRetriable(() => admin.fetchTopicOffsets(topic));

export function createKafkaBroker(options: KafkaBrokerOptions): Broker {
  const kafka = new Kafka({
    ...options.security,
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
      const p = kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: keyPartitioner,
      });
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

  /**
   * Runs a consumer group member that outlives its membership. kafkajs rejoins by itself after
   * a rebalance it notices, and restarts after retriable crashes; a crash it will not restart
   * (the coordinator forgot this member while the broker was frozen, a fenced member) gets a
   * fresh member here, with backoff, resuming from the committed offsets. A process never
   * stops consuming because its broker went away.
   */
  async function consume(opts: ConsumerOptions): Promise<RunningConsumer> {
    const group = { ...defaultGroup, ...options.group };
    const health: ConsumerHealth = {
      groupId: opts.groupId,
      state: 'starting',
      ready: false,
      rejoins: 0,
      lastActivityAt: new Date().toISOString(),
    };
    let lastActivity = Date.now();
    const touch = () => {
      lastActivity = Date.now();
    };
    let current: Consumer | null = null;
    let stopped = false;
    let failures = 0;
    let replacing: NodeJS.Timeout | undefined;

    const replace = (err: unknown) => {
      if (stopped) return;
      health.state = 'rejoining';
      health.rejoins += 1;
      metrics.consumerRejoins.inc({ group: opts.groupId });
      const delay = Math.min(30_000, 500 * 2 ** Math.min(failures++, 6));
      options.log.warn('consumer left its group; rejoining with a fresh member', {
        groupId: opts.groupId,
        rejoins: health.rejoins,
        delayMs: delay,
        err,
      });
      const old = current;
      replacing = setTimeout(() => {
        void (async () => {
          if (old) {
            consumers.delete(old);
            await old.disconnect().catch(() => {});
          }
          if (!stopped) await start(Number.POSITIVE_INFINITY);
        })();
      }, delay);
    };

    const start = async (joinAttempts: number) => {
      const consumer = kafka.consumer({
        groupId: opts.groupId,
        allowAutoTopicCreation: false,
        sessionTimeout: group.sessionTimeoutMs,
        heartbeatInterval: group.heartbeatIntervalMs,
        rebalanceTimeout: group.rebalanceTimeoutMs,
        // kafkajs heartbeats between fetches, and an empty fetch is answered the moment a message lands: a fetch
        // may wait a whole heartbeat interval without delaying a message or a heartbeat. With the default 1 s
        // interval that is a quarter of the idle fetches the former fixed 250 ms wait sent the broker.
        maxWaitTimeInMs: group.heartbeatIntervalMs,
        // After an outage longer than its retries, kafkajs restarts the consumer only if asked to.
        retry: { retries: 8, initialRetryTime: 300, maxRetryTime: 5_000, restartOnFailure: async () => true },
      });
      current = consumer;
      consumers.add(consumer);
      const { GROUP_JOIN, HEARTBEAT, FETCH, REBALANCING, CRASH } = consumer.events;
      consumer.on(GROUP_JOIN, () => {
        health.state = 'joined';
        failures = 0;
        touch();
        opts.onAssignment?.();
      });
      consumer.on(HEARTBEAT, touch);
      consumer.on(FETCH, touch);
      consumer.on(REBALANCING, () => {
        health.state = 'rejoining';
      });
      consumer.on(CRASH, (e) => {
        health.lastError = errorText(e.payload.error);
        opts.onError?.(e.payload.error);
        if (consumer !== current) return;
        if (e.payload.restart) health.state = 'rejoining';
        else replace(e.payload.error);
      });
      // A worker that starts while the broker is away waits for it instead of dying.
      for (let attempt = 1; !stopped; attempt++) {
        try {
          await consumer.connect();
          await consumer.subscribe({ topics: opts.topics, fromBeginning: true });
          break;
        } catch (err) {
          await consumer.disconnect().catch(() => {});
          if (attempt >= joinAttempts) {
            consumers.delete(consumer);
            throw err;
          }
          options.log.warn('broker unavailable, consumer waiting', { groupId: opts.groupId, attempt, err });
          await sleep(Math.min(5_000, 250 * attempt));
        }
      }
      if (stopped) return;
      await consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: 3,
        eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale, pause }) => {
          let lastDone: string | null = null;
          const control: PartitionControl = {
            commit: (offset) => commit(consumer, batch.topic, batch.partition, offset),
            replay(offset, at) {
              const partitions = [{ topic: batch.topic, partitions: [batch.partition] }];
              try {
                const waitMs = (at ?? 0) - Date.now();
                if (waitMs > 0) {
                  consumer.pause(partitions);
                  setTimeout(() => {
                    try {
                      consumer.resume(partitions);
                    } catch {
                      // Stopped meanwhile (shut down, or restarted after an outage): its next group starts unpaused,
                      // from the commit. Thrown from a timer, this would end the process.
                    }
                  }, waitMs).unref();
                }
                consumer.seek({ topic: batch.topic, partition: batch.partition, offset });
              } catch {
                // Not a member any more: whoever gets the partition reads it from the commit, which is no later.
              }
            },
          };
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
              const disposition = await opts.handle(message, control);
              if (disposition.kind === 'later') {
                // Hold this partition at this message until it is due.
                const resume = pause();
                consumer.seek({ topic: batch.topic, partition: batch.partition, offset: m.offset });
                setTimeout(resume, Math.max(0, disposition.at - Date.now())).unref();
                break;
              }
              if (disposition.kind === 'replay') {
                control.replay(disposition.from, disposition.at);
                break;
              }
              // Moves the fetch position; the offset is committed below for `done`, by the handler for `held`.
              resolveOffset(m.offset);
              if (disposition.kind === 'done') lastDone = m.offset;
              touch();
              await heartbeat();
            }
          } finally {
            // Offsets move only past messages whose effects are committed.
            if (lastDone !== null) await commit(consumer, batch.topic, batch.partition, lastDone);
          }
        },
      });
    };

    /**
     * A member that lost the group cannot commit; its messages' effects are already in the
     * inbox, so whoever gets the partition next replays them as no-ops. Only then is a refused
     * commit harmless, so only membership errors are swallowed.
     */
    const commit = async (consumer: Consumer, topic: string, partition: number, offset: string) => {
      try {
        await consumer.commitOffsets([{ topic, partition, offset: (BigInt(offset) + 1n).toString() }]);
      } catch (err) {
        if (!isMembershipError(err)) throw err;
        health.state = 'rejoining';
        options.log.warn('offset commit refused: no longer a member; the next owner replays past the last commit', {
          groupId: opts.groupId,
          topic,
          partition,
          offset,
          err,
        });
      }
    };

    await start(opts.joinAttempts ?? Number.POSITIVE_INFINITY);
    return {
      health() {
        const stale = Date.now() - lastActivity > 2 * group.sessionTimeoutMs;
        return {
          ...health,
          state: stopped ? 'stopped' : health.state,
          ready: !stopped && health.state === 'joined' && !stale,
          lastActivityAt: new Date(lastActivity).toISOString(),
        };
      },
      async stop() {
        stopped = true;
        clearTimeout(replacing);
        const c = current;
        if (c) {
          consumers.delete(c);
          await c.disconnect();
        }
      },
    };
  }

  /**
   * One admin connection for the lag and depth reads, kept between them: the release controller asks for lag every
   * few seconds, and a connection per read cost the process and the broker a handshake (with MSK IAM, a SASL one)
   * each time. A read that fails drops the connection, so the next one starts afresh after the broker is back.
   */
  let admin: Promise<Admin> | null = null;
  const withAdmin = async <T>(read: (a: Admin) => Promise<T>): Promise<T> => {
    admin ??= (async () => {
      const a = kafka.admin();
      await a.connect();
      return a;
    })();
    const current = admin;
    try {
      return await read(await current);
    } catch (err) {
      if (admin === current) admin = null;
      await (await current.catch(() => null))?.disconnect().catch(() => {});
      throw err;
    }
  };

  const lag = (groupId: string, topics: string[]) =>
    withAdmin(async (a) => {
      let total = 0;
      const committed = await a.fetchOffsets({ groupId, topics });
      for (const t of committed) {
        const ends = await topicOffsets(a, t.topic);
        for (const p of t.partitions) {
          const end = ends.find((e) => e.partition === p.partition);
          const high = Number(end?.high ?? 0);
          const low = Number(end?.low ?? 0);
          const at = Number(p.offset) < 0 ? low : Number(p.offset);
          total += Math.max(0, high - at);
        }
      }
      return total;
    });

  const depth = (topic: string) =>
    withAdmin(async (a) => {
      const offsets = await topicOffsets(a, topic);
      return offsets.reduce((sum, p) => sum + Math.max(0, Number(p.high) - Number(p.low)), 0);
    });

  return {
    publish,
    consume,
    lag,
    depth,
    async close() {
      await Promise.all([...consumers].map((c) => c.disconnect().catch(() => {})));
      consumers.clear();
      const p = producer;
      producer = null;
      if (p) await (await p.catch(() => null))?.disconnect();
      // Not waited for: a connect still under way to an unreachable broker would hold the close for its retries.
      const a = admin;
      admin = null;
      void a?.then((c) => c.disconnect()).catch(() => {});
    },
  };
}

/**
 * Creates a cell's topics if missing; the broker never auto-creates them. Returns the topics its first
 * listing lacked (a start beside it may have created some of them first).
 */
export async function provisionTopics(
  options: { brokers: string[]; log: Logger; security?: KafkaBrokerOptions['security'] },
  topics: { topic: string; partitions: number; replicationFactor: number; configs?: Record<string, string> }[],
): Promise<string[]> {
  const kafka = new Kafka({
    ...options.security,
    clientId: 'provision',
    brokers: options.brokers,
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  let lacking: string[] | undefined;
  try {
    // A broker busy electing leaders answers retriable errors (UNKNOWN_TOPIC_OR_PARTITION while a new
    // topic's metadata spreads): each attempt lists afresh, creates only what is missing, and ends
    // when every partition has a leader, so a platform's start does not fail on a moment's lag.
    return await retryingRetriable(
      async () => {
        const existing = new Set(await admin.listTopics());
        const missing = topics.filter((t) => !existing.has(t.topic));
        lacking ??= missing.map((t) => t.topic);
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
        await everyPartitionLed(
          admin,
          topics.map((t) => t.topic),
        );
        return lacking;
      },
      (attempt, err) => options.log.warn('topic provisioning retried', { attempt, error: err.message }),
    );
  } finally {
    await admin.disconnect();
  }
}

async function everyPartitionLed(admin: Admin, topics: string[]) {
  const { topics: meta } = await admin.fetchTopicMetadata({ topics });
  const leaderless = meta.filter((t) => t.partitions.some((p) => p.leader < 0)).map((t) => t.name);
  if (leaderless.length > 0) {
    throw Object.assign(new Error(`no partition leader yet: ${leaderless.join(', ')}`), { retriable: true });
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
