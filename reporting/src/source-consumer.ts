import type { Logger } from '@onsale/contracts';
import type { Broker, IncomingMessage, PartitionControl, RunningConsumer } from '@onsale/messaging/broker';
import type pg from 'pg';
import { type Fact, toFact } from './facts';
import { encodeFacts } from './parquet';
import { batchPlanKey, factObjectKey, type ObjectStore } from './s3';
import { applyFacts } from './store';

export interface FlushPolicy {
  /** Flush a partition's batch at this many messages... */
  maxMessages: number;
  /** ...or once its oldest message has waited this long. */
  maxAgeMs: number;
}

interface Batch {
  first: bigint;
  last: bigint;
  messages: number;
  facts: Fact[];
  startedAt: number;
  /** The last offset of this batch when an earlier run already planned it (a replay). */
  plannedLast: bigint | null;
  control: PartitionControl;
}

export interface SourceConsumerOptions {
  broker: Broker;
  source: string;
  topic: string;
  groupId: string;
  store: ObjectStore;
  /** Key prefix inside the bucket (tests give each run its own). */
  root: string;
  pool: pg.Pool;
  policy: FlushPolicy;
  log: Logger;
  /** Test hook: runs after the objects are durable and before the offset commit. */
  beforeCommit?: (source: string) => void;
}

const dateOf = (d: Date) => d.toISOString().slice(0, 10);

/**
 * A failed batch is read again after a wait that doubles with each failure in a row, from the first to the last:
 * its store may be down, and read again at once it failed the same way some 300 times a second for as long as the
 * projections' database was away (a drill's 30 s: 10,484 attempts, each a warning).
 */
const RETRY_FIRST_MS = 100;
const RETRY_LAST_MS = 2_000;

/**
 * Reads one source topic (a cell's purchase topic or the control plane's facts) and turns it
 * into immutable Parquet objects. Per partition, a batch of messages becomes, in this order:
 * a plan object naming its offset range, one object per tenant/event/day, the projections'
 * update, then the offset commit. A crash anywhere replays the batch from its first offset;
 * the plan makes the replay cut the same range, so it rewrites the same bytes under the same
 * names, and the projections skip facts they already applied.
 */
export function createSourceConsumer(o: SourceConsumerOptions) {
  const batches = new Map<number, Batch>();
  /** Each partition's failed batches in a row. */
  const failures = new Map<number, number>();
  const locks = new Map<number, Promise<void>>();
  let consumer: RunningConsumer | null = null;
  let timer: NodeJS.Timeout | undefined;

  const withLock = (partition: number, fn: () => Promise<void>) => {
    const next = (locks.get(partition) ?? Promise.resolve()).then(fn);
    locks.set(
      partition,
      next.catch(() => {}),
    );
    return next;
  };

  async function flush(partition: number): Promise<void> {
    const b = batches.get(partition);
    if (!b) return;
    const range = { topic: o.topic, partition, first: b.first, last: b.last };
    const groups = new Map<string, Fact[]>();
    for (const f of b.facts) {
      const key = factObjectKey(o.root, { ...f, date: dateOf(f.occurredAt), source: o.source }, range);
      groups.set(key, [...(groups.get(key) ?? []), f]);
    }
    const keys = [...groups.keys()].sort();
    if (b.plannedLast === null) {
      await o.store.put(
        batchPlanKey(o.root, o.topic, partition, b.first),
        JSON.stringify({ first: b.first.toString(), last: b.last.toString(), objects: keys }),
        'application/json',
      );
    }
    await Promise.all(keys.map((k) => o.store.put(k, encodeFacts(groups.get(k)!), 'application/vnd.apache.parquet')));
    await applyFacts(o.pool, b.facts);
    o.beforeCommit?.(o.source);
    await b.control.commit(b.last.toString());
    batches.delete(partition);
    failures.delete(partition);
    o.log.debug('batch flushed', {
      source: o.source,
      partition,
      first: String(b.first),
      last: String(b.last),
      objects: keys.length,
    });
  }

  async function add(m: IncomingMessage, control: PartitionControl): Promise<void> {
    const { partition } = m;
    const offset = BigInt(m.offset);
    let b = batches.get(partition);
    if (b && offset <= b.last) {
      // The partition was sought back: a batch whose flush failed rewound to its first offset while this later one
      // was buffering. Everything this batch holds is read again after that rewind, so it starts over here; kept,
      // it would have gathered the earlier offsets too, and written their facts a second time under its own range.
      batches.delete(partition);
      b = undefined;
    }
    if (!b) {
      const plan = await o.store.get(batchPlanKey(o.root, o.topic, partition, offset));
      b = {
        first: offset,
        last: offset,
        messages: 0,
        facts: [],
        startedAt: Date.now(),
        plannedLast: plan ? BigInt(JSON.parse(Buffer.from(plan).toString('utf8')).last) : null,
        control,
      };
      batches.set(partition, b);
    }
    b.last = offset;
    b.messages++;
    const fact = toFact({ source: o.source, partition, offset: m.offset, value: m.value });
    if (fact) b.facts.push(fact);
    const full = b.plannedLast !== null ? offset >= b.plannedLast : b.messages >= o.policy.maxMessages;
    if (full) await flush(partition);
  }

  /**
   * A failed batch is dropped; where to read it again from (its first offset, or `from` when none had begun), and
   * when.
   */
  function rewind(partition: number, err: unknown, from: string): { from: string; at: number } {
    const b = batches.get(partition);
    batches.delete(partition);
    const attempt = (failures.get(partition) ?? 0) + 1;
    failures.set(partition, attempt);
    const waitMs = Math.min(RETRY_LAST_MS, RETRY_FIRST_MS * 2 ** (attempt - 1));
    o.log.warn('batch failed; reading it again', { source: o.source, partition, attempt, waitMs, err });
    return { from: b ? b.first.toString() : from, at: Date.now() + waitMs };
  }

  async function flushStale(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      [...batches.entries()]
        .filter(([, b]) => b.plannedLast === null && now - b.startedAt >= o.policy.maxAgeMs)
        .map(([p]) =>
          withLock(p, async () => {
            const b = batches.get(p);
            if (b && b.plannedLast === null && Date.now() - b.startedAt >= o.policy.maxAgeMs) {
              await flush(p).catch((err) => {
                const again = rewind(p, err, b.first.toString());
                b.control.replay(again.from, again.at);
              });
            }
          }),
        ),
    );
  }

  return {
    source: o.source,
    async start(): Promise<void> {
      consumer = await o.broker.consume({
        groupId: o.groupId,
        topics: [o.topic],
        // Its own retry is the reporter's next registry poll, which may name other brokers by then.
        joinAttempts: 1,
        // A rebalance hands partitions to a member from their committed offsets: drop what was buffered.
        onAssignment: () => batches.clear(),
        handle: async (m, control) => {
          try {
            await withLock(m.partition, () => add(m, control));
            return { kind: 'held' };
          } catch (err) {
            return { kind: 'replay', ...rewind(m.partition, err, m.offset) };
          }
        },
      });
      timer = setInterval(
        () => {
          void flushStale();
        },
        Math.max(50, Math.floor(o.policy.maxAgeMs / 4)),
      );
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await Promise.all(locks.values());
      await consumer?.stop();
      consumer = null;
    },
  };
}
export type SourceConsumer = ReturnType<typeof createSourceConsumer>;
