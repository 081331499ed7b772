import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { migrateCell } from '@onsale/cell/db/migrate';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import type { Platform } from '../../scripts/local-platform/launch';
import { repoRoot } from './services';

/**
 * runbooks/region-failover.md, run as written against a cell's local standby region (`scripts/services standby up`:
 * an asynchronous PostgreSQL replica and a second Kafka cluster fed by MirrorMaker 2). One function per step, in the
 * runbook's order; `failOverRegion` runs them all once the primary region is lost, and reports what each found.
 */
const exec = promisify(execFile);

export interface StandbyRegion {
  /** The cell's stores as scripts/services names them (c1), and its environment (ONSALE_DATA, ports). */
  instance: string;
  env: NodeJS.ProcessEnv;
}

export const standbyServices = (region: StandbyRegion, ...args: string[]) =>
  exec('bash', ['scripts/services', ...args], { cwd: repoRoot, env: region.env, timeout: 600_000 });

/** The standby's server and brokers (`scripts/services standby env`). */
export async function standbyAddresses(region: StandbyRegion) {
  const { stdout } = await standbyServices(region, 'standby', 'env', region.instance);
  const value = (name: string) => new RegExp(`^${name}=(.*)$`, 'm').exec(stdout)?.[1] ?? '';
  return { port: Number(new URL(value('DATABASE_URL')).port), kafkaBrokers: value('KAFKA_BROKERS') };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Every event id on a cluster's topics, from the beginning to the end offsets as they are now. */
export async function eventIdsOn(brokers: string, topics: string[]): Promise<Set<string>> {
  const kafka = new Kafka({ clientId: 'region-drill', brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const existing = new Set(await admin.listTopics());
  const ends = new Map<string, number>();
  for (const topic of topics.filter((t) => existing.has(t)))
    for (const p of await admin.fetchTopicOffsets(topic))
      if (Number(p.high) > Number(p.low)) ends.set(`${topic}/${p.partition}`, Number(p.high));
  await admin.disconnect();
  const ids = new Set<string>();
  if (ends.size === 0) return ids;
  const consumer = kafka.consumer({ groupId: `region-drill-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({
    topics: [...new Set([...ends.keys()].map((k) => k.split('/')[0]!))],
    fromBeginning: true,
  });
  const left = new Set(ends.keys());
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`reading ${brokers}: partitions not read to the end: ${[...left]}`)),
      60_000,
    );
    void consumer.run({
      eachMessage: async ({ topic, partition, message }) => {
        const id = (JSON.parse(message.value?.toString() ?? '{}') as { eventId?: string }).eventId;
        if (id) ids.add(id);
        const key = `${topic}/${partition}`;
        if (Number(message.offset) + 1 >= (ends.get(key) ?? 0)) left.delete(key);
        if (left.size === 0) {
          clearTimeout(timer);
          resolve();
        }
      },
    });
  });
  try {
    await done;
  } finally {
    await consumer.disconnect();
  }
  return ids;
}

async function patchCell(platform: Platform, operator: string, cellId: string, body: Record<string, unknown>) {
  const res = await fetch(`${platform.urls.controlPlane}/operator/cells/${cellId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${operator}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`PATCH /operator/cells/${cellId}: ${res.status} ${await res.text()}`);
}

export interface RegionFailoverReport {
  /** Step 2: the standby database's last replayed commit, and the newest record the mirror had copied. */
  lastReplayedCommitAt: number | null;
  /** Step 3: how long the promotion took (mirror detached, replica promoted). */
  promoteSeconds: number;
  /** Step 4: the epoch the promoted database now requires. */
  epoch: number;
  /** Step 6: outbox rows marked published whose event the standby's topics lack (the mirror's loss), re-published. */
  eventsNotMirrored: number;
  /** Events on the standby's topics whose outbox row the promoted database lacks (facts of lost commits). */
  eventsWithoutOutboxRow: number;
  outboxPublished: number;
  /** Steps 6-8: the cell's API in the standby region, in the registry from `switchedAt`. */
  standbyApiUrl: string;
  switchedAt: number;
  steps: { step: string; seconds: number }[];
}

/**
 * The runbook's steps, run after the primary region of `cellId` is lost. `databaseUrl` is the cell's ledger as its
 * processes named it in the lost region (the standby holds the same database on its own server).
 */
export async function failOverRegion(o: {
  platform: Platform;
  operator: string;
  cellId: string;
  databaseUrl: string;
  region: StandbyRegion;
  epoch: number;
  /** Runs right after the fence (a game day checks there that the old epoch is refused). */
  onFenced?: () => Promise<void>;
}): Promise<RegionFailoverReport> {
  const steps: { step: string; seconds: number }[] = [];
  const timed = async <T>(step: string, fn: () => Promise<T>) => {
    const t0 = Date.now();
    const value = await fn();
    steps.push({ step, seconds: +((Date.now() - t0) / 1000).toFixed(1) });
    return value;
  };
  const standby = await standbyAddresses(o.region);
  const url = new URL(o.databaseUrl);
  url.host = `127.0.0.1:${standby.port}`;
  const standbyDb = url.toString();

  // 1. Stop admission: the router answers 503 for the cell's events from its next directory poll.
  await timed('1 stop admission', () => patchCell(o.platform, o.operator, o.cellId, { status: 'draining' }));
  // 2. Record the replication lag (what the reconciliation must cover).
  const lastReplayedCommitAt = await timed('2 record the lag', () =>
    withClient(standbyDb, async (c) => {
      const { rows } = await c.query<{ at: Date | null }>('SELECT pg_last_xact_replay_timestamp() AS at');
      return rows[0]?.at?.getTime() ?? null;
    }),
  );
  // 3. Detach the standby (the mirror stops) and promote its database.
  const t3 = Date.now();
  await timed('3 detach and promote', () => standbyServices(o.region, 'standby', 'promote', o.region.instance));
  const promoteSeconds = +((Date.now() - t3) / 1000).toFixed(1);
  // 4-5. The stack's migration on the promoted database raises the epoch: every writer of an older one is refused.
  await timed('5 fence the old epoch', () => migrateCell(standbyDb, o.cellId, o.epoch));
  await o.onFenced?.();
  // 6. Replay: consumers resume from the mirrored offsets; what the mirror had not copied is published again from
  //    the outbox (rows are kept RELAY_RETAIN_PUBLISHED_MS after publication), the inboxes absorb any duplicate.
  const replay = await timed('6 replay what the mirror lost', async () => {
    const published = await withClient(standbyDb, async (c) => {
      const { rows } = await c.query<{ event_id: string; topic: string }>(
        'SELECT event_id, topic FROM outbox WHERE published_at IS NOT NULL',
      );
      return rows;
    });
    const topics = [...new Set(published.map((r) => r.topic))];
    const mirrored = await eventIdsOn(standby.kafkaBrokers, topics);
    const inOutbox = new Set(published.map((r) => r.event_id));
    const missing = published.filter((r) => !mirrored.has(r.event_id)).map((r) => r.event_id);
    await withClient(standbyDb, (c) =>
      c.query('UPDATE outbox SET published_at = NULL WHERE event_id = ANY($1::uuid[])', [missing]),
    );
    return {
      outboxPublished: published.length,
      eventsNotMirrored: missing.length,
      eventsWithoutOutboxRow: [...mirrored].filter((id) => !inOutbox.has(id)).length,
    };
  });
  const standbyApiUrl = await timed('6 start the services under the new epoch', () =>
    o.platform.relocateCell(o.cellId, {
      databaseUrl: standbyDb,
      kafkaBrokers: standby.kafkaBrokers,
      epoch: o.epoch,
      region: 'standby',
    }),
  );
  // 7. Synthetic check: the standby's API is ready only when its epoch is the database's.
  await timed('7 synthetic check', async () => {
    const res = await fetch(`${standbyApiUrl}/readyz`);
    if (res.status !== 200) throw new Error(`the standby's API is not ready: ${res.status} ${await res.text()}`);
  });
  // 8. Switch traffic: the registry names the standby's API and brokers, and admission resumes.
  await timed('8 switch traffic', () =>
    patchCell(o.platform, o.operator, o.cellId, {
      baseUrl: standbyApiUrl,
      region: 'standby',
      kafkaBrokers: standby.kafkaBrokers,
      status: 'active',
    }),
  );
  // 9. Reconcile: the reconciler runs in the standby with the other processes; nothing to start.
  return {
    lastReplayedCommitAt,
    promoteSeconds,
    epoch: o.epoch,
    ...replay,
    standbyApiUrl,
    switchedAt: Date.now(),
    steps,
  };
}
