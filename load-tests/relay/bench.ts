/**
 * Outbox relay throughput beside Kafka's own ProducerPerformance (same broker, same message
 * size, acks=all, idempotent), then the outbox delivery latency (published_at - created_at)
 * under a steady hold load through the real cell API and relay processes, and with events
 * written straight into the outbox at a fixed rate (1,000/s: the target's figure) for the
 * relay process to deliver. `pnpm bench:relay` (Kafka's tools jar comes with the broker's,
 * fetched by scripts/services). Knobs: BENCH_EVENTS (rows to relay), BENCH_HOLD_RATE (holds/s),
 * BENCH_HOLD_SECONDS, BENCH_OUTBOX_RATE (events/s), BENCH_OUTBOX_SECONDS, BENCH_RUNTIME=tsx; the relay
 * role's own RELAY_BATCH_SIZE, RELAY_LEASE_MS and RELAY_RETAIN_PUBLISHED_MS are read as the role reads them.
 */
import { randomUUID } from 'node:crypto';
import { CellRelayConfig } from '@onsale/cell/config';
import { migrateCell } from '@onsale/cell/db/migrate';
import { createRelay } from '@onsale/cell/relay/relay';
import { cellTopics, createLogger, parseEnv } from '@onsale/contracts';
import { createKafkaBroker, deleteTopics } from '@onsale/messaging/kafka-broker';
import { freePort } from '../../scripts/local-platform/launch';
import { startProcess } from '../../scripts/local-platform/process';
import { startCellApiProcess } from '../../test/support/cell-process';
import { createTestDatabase } from '../../test/support/db';
import { startIdentity } from '../../test/support/identity';
import { kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { eventLoad } from '../../test/support/seed';
import { workerContext } from '../../test/support/workers';
import { type Bench, runBench } from '../lib/harness';
import { percentile, round } from '../lib/stats';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 50_000);
const HOLD_RATE = Number(process.env.BENCH_HOLD_RATE ?? 100);
const HOLD_SECONDS = Number(process.env.BENCH_HOLD_SECONDS ?? 20);
const OUTBOX_RATE = Number(process.env.BENCH_OUTBOX_RATE ?? 1_000);
const OUTBOX_SECONDS = Number(process.env.BENCH_OUTBOX_SECONDS ?? 10);
const PARTITIONS = 6;

await runBench('relay', async (bench) => {
  const cellId = uniqueCellId('rb');
  const db = await createTestDatabase('bench_relay');
  bench.defer(db.drop);
  await migrateCell(db.url, cellId, 1);
  const perfTopic = `bench.perf.${cellId}`;
  bench.defer(() => deleteTopics(kafkaBrokers(), [...Object.values(cellTopics(cellId)), perfTopic]).catch(() => {}));
  const topics = await provisionCellTopics(cellId, PARTITIONS);
  await kafkaTool(bench, 'kafka-topics', [
    'org.apache.kafka.tools.TopicCommand',
    '--bootstrap-server',
    kafkaBrokers()[0]!,
    '--create',
    '--topic',
    perfTopic,
    '--partitions',
    String(PARTITIONS),
    '--replication-factor',
    '1',
  ]);

  // 1. Relay throughput: a backlog of HoldCreated-sized envelopes, drained by one relay.
  const sample = {
    eventId: randomUUID(),
    eventType: 'HoldCreated',
    schemaVersion: 1,
    aggregateId: randomUUID(),
    occurredAt: new Date().toISOString(),
    correlationId: randomUUID(),
    causationId: null,
    cellId,
    payload: {
      orderId: randomUUID(),
      holdId: randomUUID(),
      eventId: randomUUID(),
      userId: 'buyer-0000000000',
      seatIds: [randomUUID(), randomUUID()],
      amount: 10_000,
      currency: 'eur',
      expiresAt: new Date().toISOString(),
    },
  };
  const messageBytes = Buffer.byteLength(JSON.stringify(sample));
  await db.query(
    `INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope)
     SELECT gen_random_uuid(), gen_random_uuid(), 'HoldCreated', $1, $2::jsonb FROM generate_series(1, $3)`,
    [topics.purchase, JSON.stringify(sample), EVENTS],
  );
  const ctx = workerContext(cellId, db.url, 'bench-relay');
  const broker = createKafkaBroker({
    brokers: kafkaBrokers(),
    clientId: 'bench-relay',
    log: createLogger({ role: 'bench' }, 'error'),
  });
  // The relay role's own configuration (RELAY_BATCH_SIZE and the rest), parsed as the role parses it.
  const relayConfig = parseEnv(
    CellRelayConfig.pick({ RELAY_BATCH_SIZE: true, RELAY_LEASE_MS: true, RELAY_RETAIN_PUBLISHED_MS: true }),
  );
  const relay = createRelay(ctx, broker, {
    batchSize: relayConfig.RELAY_BATCH_SIZE,
    leaseMs: relayConfig.RELAY_LEASE_MS,
    idleMs: 5,
    retainPublishedMs: relayConfig.RELAY_RETAIN_PUBLISHED_MS,
  });
  await broker.publish(topics.purchase, [{ key: 'warmup', value: '{}' }]);
  const started = performance.now();
  const { cpu: relayCpu } = await bench.measured(async () => {
    let published = 0;
    while (published < EVENTS) published += await relay.publishOnce();
    return {};
  });
  const relaySeconds = (performance.now() - started) / 1000;
  await broker.close();
  await ctx.database.close();

  // 2. The broker's own producer, same size, same durability.
  const { output: perf, cpu: perfCpu } = await bench.measured(async () => ({
    output: await kafkaTool(bench, 'ProducerPerformance', [
      'org.apache.kafka.tools.ProducerPerformance',
      '--topic',
      perfTopic,
      '--num-records',
      String(EVENTS),
      '--record-size',
      String(messageBytes),
      '--throughput',
      '-1',
      '--producer-props',
      `bootstrap.servers=${kafkaBrokers()[0]}`,
      'acks=all',
      'enable.idempotence=true',
    ]),
  }));
  const perfRate = Number(/([\d.]+) records\/sec/.exec(perf.trim().split('\n').at(-1) ?? '')?.[1]);

  // 3. Delivery latency under a steady hold load: real API and relay processes.
  await db.query('DELETE FROM outbox');
  const identity = await startIdentity();
  bench.defer(identity.close);
  const port = await freePort();
  const cell = await startCellApiProcess(identity, {
    cellId,
    port,
    poolSize: 20,
    database: db,
    runtime: bench.runtime,
    spawned: bench.started,
  });
  await startProcess(
    'cell/src/relay/main.ts',
    { CELL_ID: cellId, DATABASE_URL: db.url, KAFKA_BROKERS: kafkaBrokers().join(','), LOG_LEVEL: 'warn' },
    { name: 'cell-relay', command: bench.command('cell/src/relay/main.ts'), spawned: bench.started },
  );
  const load = await cell.loadEvent(eventLoad(HOLD_RATE * HOLD_SECONDS + 1));
  const hold = async (i: number) => {
    const userId = `steady-${i}`;
    const [bearer, admission] = await Promise.all([
      identity.buyerToken(userId),
      identity.admissionToken({ sub: userId, eventId: load.eventId, purchaseCell: cellId }),
    ]);
    const res = await fetch(`http://127.0.0.1:${port}/events/${load.eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${bearer}`,
        'x-admission-token': admission,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds: [load.seats[i]!.id] }),
    });
    await res.arrayBuffer();
  };
  const drained = async () => {
    for (let i = 0; i < 200; i++) {
      const [row] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM outbox WHERE published_at IS NULL');
      if (row!.n === 0) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  // Warm up: the relay's first publish pays for connecting and fetching metadata; steady state is what we measure.
  await hold(HOLD_RATE * HOLD_SECONDS);
  await drained();
  await db.query('DELETE FROM outbox');
  const inflight: Promise<unknown>[] = [];
  const t0 = Date.now();
  for (let i = 0; i < HOLD_RATE * HOLD_SECONDS; i++) {
    const wait = t0 + (i * 1000) / HOLD_RATE - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(hold(i));
  }
  await Promise.all(inflight);
  await drained();
  const outboxAges = async () =>
    (
      await db.query<{ ms: number }>(
        `SELECT (extract(epoch FROM published_at - created_at) * 1000)::float8 AS ms FROM outbox`,
      )
    ).map((r) => r.ms);
  const ages = await outboxAges();

  // 4. Events written straight into the outbox at OUTBOX_RATE, in a commit every 20 ms (as many API
  // processes would), delivered by the relay process: its delivery latency at that rate, whatever the
  // hold path can sustain on this machine.
  await db.query('DELETE FROM outbox');
  const tickMs = 20;
  const perTick = Math.max(1, Math.round((OUTBOX_RATE * tickMs) / 1000));
  const writes: Promise<unknown>[] = [];
  const w0 = performance.now();
  for (let tick = 0; tick < (OUTBOX_SECONDS * 1000) / tickMs; tick++) {
    const wait = w0 + tick * tickMs - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    writes.push(
      db.query(
        `INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope)
         SELECT gen_random_uuid(), gen_random_uuid(), 'HoldCreated', $1, $2::jsonb FROM generate_series(1, $3)`,
        [topics.purchase, JSON.stringify(sample), perTick],
      ),
    );
  }
  await Promise.all(writes);
  const writtenPerSecond = (((OUTBOX_SECONDS * 1000) / tickMs) * perTick) / ((performance.now() - w0) / 1000);
  await drained();
  const fixedRateAges = await outboxAges();
  const unpublished = fixedRateAges.filter((ms) => ms === null).length;

  const relayRate = EVENTS / relaySeconds;
  return {
    messageBytes,
    events: EVENTS,
    partitions: PARTITIONS,
    relay: { eventsPerSecond: round(relayRate), batchSize: relayConfig.RELAY_BATCH_SIZE, cpu: relayCpu },
    producerPerformance: { recordsPerSecond: round(perfRate), cpu: perfCpu },
    ratio: round(relayRate / perfRate, 3),
    steadyHoldLoad: {
      holdsPerSecond: HOLD_RATE,
      seconds: HOLD_SECONDS,
      events: ages.length,
      outboxAgeP50Ms: round(percentile(ages, 50), 1),
      outboxAgeP99Ms: round(percentile(ages, 99), 1),
    },
    fixedOutboxRate: {
      eventsPerSecond: OUTBOX_RATE,
      writtenPerSecond: round(writtenPerSecond),
      seconds: OUTBOX_SECONDS,
      events: fixedRateAges.length,
      unpublished,
      outboxAgeP50Ms: round(
        percentile(
          fixedRateAges.filter((ms) => ms !== null),
          50,
        ),
        1,
      ),
      outboxAgeP99Ms: round(
        percentile(
          fixedRateAges.filter((ms) => ms !== null),
          99,
        ),
        1,
      ),
    },
  };
});

/** A class from Kafka's jars (scripts/services kafka-class execs java, so its PID is the tool's own). */
function kafkaTool(bench: Bench, name: string, args: string[]): Promise<string> {
  return bench.exec(name, 'bash', ['scripts/services', 'kafka-class', ...args]);
}
