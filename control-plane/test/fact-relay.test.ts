import { randomUUID } from 'node:crypto';
import { CONTROL_PLANE_FACTS_TOPIC, createLogger, parseEnv } from '@onsale/contracts';
import type { Broker } from '@onsale/messaging/broker';
import { createKafkaBroker, provisionTopics } from '@onsale/messaging/kafka-broker';
import { ReportingConfig } from '@onsale/reporting/config';
import { startReporter } from '@onsale/reporting/reporter';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addCell, createHarness, type Harness, scheduledEvent } from '../../test/support/control-plane';
import { eventually, kafkaBrokers, readTopic } from '../../test/support/kafka';
import { serviceEnv } from '../../test/support/services';
import { appendFact } from '../src/outbox/facts';
import { createFactRelay } from '../src/outbox/relay';

/**
 * The control plane's fact relay: claim with a lease, publish, mark. A relay that dies after
 * publishing and before marking leaves its rows claimed; once the lease lapses another relay
 * publishes them again (a duplicate, never a loss), and the reporting projections count each
 * fact once.
 */
let h: Harness;
let eventId: string;
let tenantId: string;
const log = createLogger({ role: 'fact-relay-test' }, 'silent');
let broker: Broker;
const LEASE_MS = 1_500;
const opts = { batchSize: 100, leaseMs: LEASE_MS, idleMs: 20 };
const pools: pg.Pool[] = [];
const pool = () => {
  const p = new pg.Pool({ connectionString: h.config.DATABASE_URL_CONTROL_PLANE, max: 2 });
  pools.push(p);
  return p;
};
const pending = async () =>
  (
    await h.services.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM fact_outbox WHERE aggregate_id = $1 AND published_at IS NULL',
      [eventId],
    )
  ).rows[0]!.n;

/** Every message on the facts topic about this test's event, read to the topic's end. */
async function published(): Promise<string[]> {
  const all = await readTopic(CONTROL_PLANE_FACTS_TOPIC, await broker.depth(CONTROL_PLANE_FACTS_TOPIC));
  return all.filter((m) => m.key === eventId).map((m) => JSON.parse(m.value).eventId as string);
}

beforeAll(async () => {
  h = await createHarness();
  const t = await h.tenant('Relay Promotions');
  tenantId = t.id;
  const cellId = `relay-${randomUUID().slice(0, 8)}`;
  await addCell(h, cellId);
  eventId = (await scheduledEvent(h, t.owner, { seats: 5, cellId })).eventId;
  await provisionTopics({ brokers: kafkaBrokers(), log }, [
    { topic: CONTROL_PLANE_FACTS_TOPIC, partitions: 3, replicationFactor: 1 },
  ]);
  broker = createKafkaBroker({ brokers: kafkaBrokers(), clientId: 'fact-relay-test', log });
});
afterAll(async () => {
  await broker?.close();
  for (const p of pools) await p.end().catch(() => {});
  await h?.close();
});

describe('control-plane fact relay', () => {
  it('a relay dead between publish and mark: the lease holds the rows, then a duplicate, then the projections count once', async () => {
    for (let i = 0; i < 5; i++) await appendFact(h.services.db, 'QueueJoined', eventId, { eventId }, new Date());
    await appendFact(h.services.db, 'BuyersAdmitted', eventId, { eventId, count: 5 }, new Date());

    // Relay A publishes, then its database connection is gone before the mark: a crash at that boundary.
    const doomed = pool();
    const dies = createFactRelay(
      doomed,
      {
        publish: async (topic, messages) => {
          await broker.publish(topic, messages);
          await doomed.end();
        },
      },
      log,
      opts,
    );
    await expect(dies.once()).rejects.toThrow();
    expect(await pending()).toBe(6);

    // The lease keeps another relay off the claimed rows until it lapses; then it publishes and marks them.
    const survivor = createFactRelay(pool(), broker, log, opts);
    expect(await survivor.once()).toBe(0);
    await new Promise((r) => setTimeout(r, LEASE_MS + 200));
    expect(await survivor.once()).toBe(6);
    expect(await pending()).toBe(0);
    expect(await survivor.once()).toBe(0);

    const ids = await published();
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(6);

    const groupPrefix = `reporting-fact-relay-${randomUUID().slice(0, 8)}`;
    const reporter = await startReporter(
      parseEnv(ReportingConfig, {
        ...serviceEnv(),
        DATABASE_URL_CONTROL_PLANE: h.config.DATABASE_URL_CONTROL_PLANE,
        REPORTING_PREFIX: `fact-relay-${randomUUID().slice(0, 8)}/`,
        REPORTING_GROUP_PREFIX: groupPrefix,
        FLUSH_MAX_AGE_MS: '300',
        LOG_LEVEL: 'error',
      }),
      createLogger({ role: 'reporting-test' }, 'error'),
    );
    try {
      // Read past every copy (the duplicates sit at later offsets than the originals) before counting.
      await eventually(
        async () => (await broker.lag(`${groupPrefix}.control-plane`, [CONTROL_PLANE_FACTS_TOPIC])) === 0,
        'the reporting consumer read the facts topic to its end',
        60_000,
        200,
      );
      const funnel = await h.services.pool.query(
        'SELECT queued::int, admitted::int FROM reporting.funnel WHERE tenant_id = $1 AND event_id = $2',
        [tenantId, eventId],
      );
      expect(funnel.rows).toEqual([{ queued: 5, admitted: 5 }]);
    } finally {
      await reporter.stop();
    }
  });

  it('two relays racing claim disjoint rows: each fact published once', async () => {
    for (let i = 0; i < 40; i++) await appendFact(h.services.db, 'QueueJoined', eventId, { eventId }, new Date());
    const [a, b] = [createFactRelay(pool(), broker, log, opts), createFactRelay(pool(), broker, log, opts)];
    const before = (await published()).length;
    let sent = 0;
    while ((await pending()) > 0) sent += (await Promise.all([a.once(), b.once()])).reduce((x, y) => x + y, 0);
    expect(sent).toBe(40);
    expect((await published()).length - before).toBe(40);
  });
});
