import { cellTopics, createLogger, parseEnv } from '@onsale/contracts';
import { createKafkaBroker } from '@onsale/messaging/kafka-broker';
import type { TestDatabase } from '../../test/support/db';
import { eventually, kafkaBrokers } from '../../test/support/kafka';
import { serviceEnv } from '../../test/support/services';
import { ReportingConfig } from '../src/config';
import type { ObjectStore } from '../src/s3';

/**
 * A reporting consumer's configuration for a test: the local services, the test's control-plane
 * database, its own object prefix and consumer groups, and small batches flushed quickly.
 */
export function testReporterConfig(o: { controlPlaneDatabaseUrl: string; prefix: string; groupPrefix: string }) {
  return parseEnv(ReportingConfig, {
    ...serviceEnv(),
    DATABASE_URL_CONTROL_PLANE: o.controlPlaneDatabaseUrl,
    REPORTING_PREFIX: o.prefix,
    REPORTING_GROUP_PREFIX: o.groupPrefix,
    FLUSH_MAX_MESSAGES: '7',
    FLUSH_MAX_AGE_MS: '300',
    REGISTRY_POLL_MS: '300',
    LOG_LEVEL: 'error',
  });
}

/**
 * The local S3 server is not S3: it overwrites an object in place, so a read racing a replay's
 * rewrite of the same key can be cut short ("aborted") or see half the bytes, and it sometimes
 * answers InternalError under load. Reads are retried, and "settled" means two reads agree.
 */
export async function retried<T>(fn: () => Promise<T>, tries = 5): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (tries === 1) throw err;
    await new Promise((r) => setTimeout(r, 500));
    return retried(fn, tries - 1);
  }
}

/** The objects under `keys()`, read a few at a time (the local S3 server drops connections past a few dozen). */
export async function readObjects(store: ObjectStore, keys: () => Promise<string[]>): Promise<Record<string, string>> {
  const sorted = (await retried(keys)).sort();
  const out: Record<string, string> = {};
  for (let i = 0; i < sorted.length; i += 4) {
    await Promise.all(
      sorted.slice(i, i + 4).map(async (k) => {
        out[k] = Buffer.from((await retried(() => store.get(k)))!).toString('base64');
      }),
    );
  }
  return out;
}

/**
 * A cell has stopped writing events: its outbox has nothing unpublished and no new row for 4 s. A replay compared
 * with what the live reporter wrote is only fair once the topic stops growing: an event written between the two
 * reads (a late refund or cancel outcome) is a new object, not a replay that differs.
 */
export async function cellQuiet(cell: { db: TestDatabase }): Promise<void> {
  const outbox = async () =>
    (
      await cell.db.query<{ rows: string; waiting: string }>(
        'SELECT count(*) AS rows, count(*) FILTER (WHERE published_at IS NULL) AS waiting FROM outbox',
      )
    )[0]!;
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    const before = await outbox();
    await new Promise((r) => setTimeout(r, 4_000));
    const after = await outbox();
    if (after.rows === before.rows && after.waiting === '0') return;
  }
  throw new Error('the cell kept writing events for 90 s');
}

const quiet = createLogger({ role: 'test' }, 'error');

/**
 * The reporter of `groupPrefix` has committed the end of each cell's purchase topic. It commits only after
 * uploading what it read, so every object those events make is written: what a comparison of objects waits for,
 * rather than a pause in the writes, which a busy machine stretches (the live reporter once wrote a cell's last
 * batch after the objects had been read as settled).
 */
export async function reporterCaughtUp(groupPrefix: string, cellIds: string[]): Promise<void> {
  const broker = createKafkaBroker({ brokers: kafkaBrokers(), clientId: 'test-caught-up', log: quiet });
  try {
    for (const cellId of cellIds) {
      const topic = cellTopics(cellId).purchase;
      await eventually(
        async () => (await broker.lag(`${groupPrefix}.${cellId}`, [topic])) === 0,
        `the reporter ${groupPrefix} to commit the end of ${topic}`,
        90_000,
        250,
      );
    }
  } finally {
    await broker.close();
  }
}

/** The objects once the reporters stop writing them: two reads 2 s apart that agree. */
export async function settledObjects(
  store: ObjectStore,
  keys: () => Promise<string[]>,
): Promise<Record<string, string>> {
  let last = await readObjects(store, keys);
  let changed: string[] = [];
  for (const deadline = Date.now() + 90_000; Date.now() < deadline; ) {
    await new Promise((r) => setTimeout(r, 2_000));
    const now = await readObjects(store, keys);
    changed = Object.keys({ ...last, ...now }).filter((k) => last[k] !== now[k]);
    if (!changed.length) return now;
    last = now;
  }
  throw new Error(`the reporters did not catch up within 90 s; still changing: ${changed.slice(0, 5).join(', ')}`);
}
