/**
 * The reporting consumer (its own process, as production runs it) beside the S3 server it
 * writes to, in one run. `pnpm bench:reporting`.
 *
 * 1. Throughput: a backlog of purchase sagas (8 events per order, 3 of them facts: held, paid,
 *    ticketed) on two cells' purchase topics, drained into Parquet objects and projections.
 *    Beside it, the raw PutObject rate of the same S3 server with objects of the size the
 *    consumer wrote, at the consumer's own concurrency and at 16 in flight.
 * 2. Delay: paid orders committed to two cells' outboxes at BENCH_ORDER_RATE per second,
 *    published by the cells' real relay processes; the delay is from each PaymentCaptured
 *    commit to the first poll that sees the order paid in the projections.
 *
 * Knobs: BENCH_BACKLOG_ORDERS, BENCH_ORDER_RATE (paid orders/s, both cells), BENCH_SECONDS,
 * BENCH_POLL_MS, FLUSH_MAX_MESSAGES and FLUSH_MAX_AGE_MS (passed to the consumer).
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import {
  DeleteObjectsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandOutput,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { migrateCell } from '@onsale/cell/db/migrate';
import { cellTopics, parseEnvelope } from '@onsale/contracts';
import { deleteTopics } from '@onsale/messaging/kafka-broker';
import { Kafka, logLevel } from 'kafkajs';
import pg from 'pg';
import { percentile, round } from '../../load-tests/lib/stats';
import { repoRoot, startProcess } from '../../scripts/local-platform/process';
import { createTestDatabase } from '../../test/support/db';
import { kafkaBrokers, provisionCellTopics, uniqueCellId } from '../../test/support/kafka';
import { paidOrderSaga } from '../../test/support/sale-events';
import { serviceEnv } from '../../test/support/services';

const BACKLOG_ORDERS = Number(process.env.BENCH_BACKLOG_ORDERS ?? 10_000);
const ORDER_RATE = Number(process.env.BENCH_ORDER_RATE ?? 500);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const POLL_MS = Number(process.env.BENCH_POLL_MS ?? 25);
const PARTITIONS = 6;
const EVENTS_PER_ORDER = 8;
const FACTS_PER_ORDER = 3;

const env = serviceEnv();
const s3 = new S3Client({
  region: env.S3_REGION!,
  endpoint: env.S3_ENDPOINT!,
  forcePathStyle: true,
  credentials: { accessKeyId: env.S3_ACCESS_KEY_ID!, secretAccessKey: env.S3_SECRET_ACCESS_KEY! },
});
const bucket = env.S3_BUCKET!;
const run = randomUUID().slice(0, 8);
const prefix = `bench-${run}/`;
const tenantId = `tenant-bench-${run}`;
const cells = [uniqueCellId('rpa'), uniqueCellId('rpb')];
const eventIds = Object.fromEntries(cells.map((c) => [c, randomUUID()]));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const orderEvents = (cellId: string, i: number) => paidOrderSaga(cellId, { tenantId, eventId: eventIds[cellId]! }, i);
// The bench publishes only what the contracts accept, as a cell's appendEvent guarantees.
for (const e of orderEvents(cells[0]!, 0).envelopes) parseEnvelope(e);

async function listObjects(p: string) {
  const out: { key: string; size: number }[] = [];
  let token: string | undefined;
  do {
    const r: ListObjectsV2CommandOutput = await s3.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: p, ContinuationToken: token }),
    );
    for (const o of r.Contents ?? []) out.push({ key: o.Key!, size: o.Size ?? 0 });
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

const kafka = new Kafka({ clientId: 'bench-reporting', brokers: kafkaBrokers(), logLevel: logLevel.NOTHING });
const admin = kafka.admin();
const groupId = (cellId: string) => `bench-reporting-${run}.${cellId}`;

/** True when every partition of the cell's purchase topic is committed up to its end. */
async function caughtUp(cellId: string): Promise<boolean> {
  const topic = cellTopics(cellId).purchase;
  const [ends, [committed]] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId: groupId(cellId), topics: [topic] }),
  ]);
  const at = new Map(committed!.partitions.map((p) => [p.partition, BigInt(p.offset)]));
  return ends.every((e) => (at.get(e.partition) ?? -1n) >= BigInt(e.high));
}

const cpDb = await createTestDatabase('bench_rep_cp', 'control-plane');
const cellDbs = await Promise.all(cells.map(() => createTestDatabase('bench_rep_cell')));
const processes: Awaited<ReturnType<typeof startProcess>>[] = [];
const logDir = resolve(repoRoot, `.data/bench/reporting-${run}`);
try {
  for (const [i, cellId] of cells.entries()) {
    await cpDb.query(
      `INSERT INTO cells (id, base_url, region, kafka_brokers) VALUES ($1, 'http://127.0.0.1:1', 'local', $2)`,
      [cellId, kafkaBrokers().join(',')],
    );
    await migrateCell(cellDbs[i]!.url, cellId, 1);
    await provisionCellTopics(cellId, PARTITIONS);
  }
  await admin.connect();

  // 1. Throughput: the backlog is on the topics before the consumer starts.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (const cellId of cells) {
    const orders = BACKLOG_ORDERS / cells.length;
    for (let from = 0; from < orders; from += 250) {
      const messages = Array.from({ length: Math.min(250, orders - from) }, (_, k) => orderEvents(cellId, from + k))
        .flatMap((o) => o.envelopes)
        .map((e) => ({ key: e.aggregateId, value: JSON.stringify(e) }));
      await producer.send({ topic: cellTopics(cellId).purchase, acks: -1, messages });
    }
  }
  await producer.disconnect();

  const consumer = await startProcess(
    'reporting/src/main.ts',
    {
      ...env,
      DATABASE_URL_CONTROL_PLANE: cpDb.url,
      REPORTING_PREFIX: prefix,
      REPORTING_GROUP_PREFIX: `bench-reporting-${run}`,
      LOG_LEVEL: 'warn',
      ...(process.env.FLUSH_MAX_MESSAGES ? { FLUSH_MAX_MESSAGES: process.env.FLUSH_MAX_MESSAGES } : {}),
      ...(process.env.FLUSH_MAX_AGE_MS ? { FLUSH_MAX_AGE_MS: process.env.FLUSH_MAX_AGE_MS } : {}),
    },
    { name: 'reporting', logFile: resolve(logDir, 'reporting.log') },
  );
  processes.push(consumer);
  // The clock starts when both cells' consumers have joined their groups: process start-up is not throughput.
  for (;;) {
    const { groups } = await admin.describeGroups(cells.map(groupId));
    if (groups.every((g) => g.state === 'Stable')) break;
    await sleep(50);
  }
  const t0 = performance.now();
  while (!(await Promise.all(cells.map(caughtUp))).every(Boolean)) await sleep(50);
  const drainSeconds = (performance.now() - t0) / 1000;
  const written = await listObjects(`${prefix}facts/`);
  const planned = await listObjects(`${prefix}_batches/`);
  const bytes = written.reduce((n, o) => n + o.size, 0);
  const objectBytes = Math.round(bytes / written.length);
  const facts = BACKLOG_ORDERS * FACTS_PER_ORDER;
  const consumerPuts = written.length + planned.length;

  // The same server, the same SDK, objects of the consumer's average size: nothing but PutObject.
  const body = new Uint8Array(objectBytes).map((_, i) => (i * 31) & 0xff);
  const rawPuts = async (concurrency: number, seconds: number) => {
    let done = 0;
    const deadline = performance.now() + seconds * 1000;
    const t = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, w) => {
        for (let k = 0; performance.now() < deadline; k++) {
          await s3.send(
            new PutObjectCommand({ Bucket: bucket, Key: `${prefix}raw/c${concurrency}/${w}-${k}`, Body: body }),
          );
          done++;
        }
      }),
    );
    return done / ((performance.now() - t) / 1000);
  };
  // The consumer runs one flush at a time per cell, each one plan and one fact object: about two puts in flight.
  const raw2 = await rawPuts(2, 5);
  const raw16 = await rawPuts(16, 5);

  // 2. Delay: paid orders into the cells' outboxes at a steady rate, real relays publishing them.
  for (const [i, cellId] of cells.entries()) {
    processes.push(
      await startProcess(
        'cell/src/relay/main.ts',
        { CELL_ID: cellId, DATABASE_URL: cellDbs[i]!.url, KAFKA_BROKERS: env.KAFKA_BROKERS!, LOG_LEVEL: 'warn' },
        { name: `${cellId}-relay`, logFile: resolve(logDir, `${cellId}-relay.log`) },
      ),
    );
  }
  const cellPools = cellDbs.map((d) => new pg.Pool({ connectionString: d.url, max: 2 }));
  const projections = new pg.Pool({ connectionString: cpDb.url, max: 1 });
  const committedAt = new Map<string, number>();
  const delays: number[] = [];
  let generating = true;
  const poller = (async () => {
    while (generating || committedAt.size > 0) {
      const waiting = [...committedAt.keys()];
      if (waiting.length > 0) {
        const r = await projections.query<{ order_id: string }>(
          `SELECT order_id::text FROM reporting.orders WHERE order_id = ANY($1::uuid[]) AND paid_at IS NOT NULL`,
          [waiting],
        );
        const now = performance.now();
        for (const { order_id } of r.rows) {
          delays.push(now - committedAt.get(order_id)!);
          committedAt.delete(order_id);
        }
      }
      await sleep(POLL_MS);
    }
  })();
  const insert = async (cell: number, orders: ReturnType<typeof orderEvents>[]) => {
    await cellPools[cell]!.query(
      `INSERT INTO outbox (event_id, aggregate_id, event_type, topic, envelope)
       SELECT (e->>'eventId')::uuid, (e->>'aggregateId')::uuid, e->>'eventType', $1, e
         FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS t(e, n) ORDER BY n`,
      [cellTopics(cells[cell]!).purchase, JSON.stringify(orders.flatMap((o) => o.envelopes))],
    );
    const now = performance.now();
    for (const o of orders) committedAt.set(o.orderId, now);
  };
  // One commit per cell per tick, as many payment workers' commits arrive together at this rate.
  const TICK_MS = 20;
  const total = ORDER_RATE * SECONDS;
  const started = performance.now();
  let sent = 0;
  const commits: Promise<void>[] = [];
  while (sent < total) {
    const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * ORDER_RATE));
    if (due > sent) {
      const batch = Array.from({ length: due - sent }, (_, k) => sent + k);
      for (const [c] of cells.entries()) {
        const mine = batch.filter((n) => n % cells.length === c).map((n) => orderEvents(cells[c]!, n));
        if (mine.length > 0) commits.push(insert(c, mine));
      }
      sent = due;
    }
    await sleep(TICK_MS);
  }
  await Promise.all(commits);
  const achievedRate = total / ((performance.now() - started) / 1000);
  generating = false;
  const stuck = setTimeout(() => {
    console.error(`${committedAt.size} orders never reached the projections; see ${logDir}`);
    process.exit(1);
  }, 120_000);
  await poller;
  clearTimeout(stuck);
  await Promise.all(cellPools.map((p) => p.end()));
  await projections.end();

  const factsPerSecond = facts / drainSeconds;
  console.log(
    JSON.stringify(
      {
        throughput: {
          cells: cells.length,
          partitionsPerCell: PARTITIONS,
          orders: BACKLOG_ORDERS,
          messages: BACKLOG_ORDERS * EVENTS_PER_ORDER,
          facts,
          seconds: round(drainSeconds, 2),
          factsPerSecond: round(factsPerSecond),
          messagesPerSecond: round((BACKLOG_ORDERS * EVENTS_PER_ORDER) / drainSeconds),
          factObjects: written.length,
          planObjects: planned.length,
          factObjectBytes: objectBytes,
          consumerPutsPerSecond: round(consumerPuts / drainSeconds),
        },
        rawPutObject: {
          objectBytes,
          putsPerSecondAt2: round(raw2),
          putsPerSecondAt16: round(raw16),
        },
        ratios: {
          consumerPutsToRawPutsAt2: round(consumerPuts / drainSeconds / raw2, 3),
          factsPerSecondPerRawPutAt2: round(factsPerSecond / raw2, 2),
        },
        delay: {
          targetPaidOrdersPerSecond: ORDER_RATE,
          achievedPaidOrdersPerSecond: round(achievedRate),
          seconds: SECONDS,
          orders: delays.length,
          pollMs: POLL_MS,
          purchaseToProjectionP50Ms: round(percentile(delays, 50)),
          purchaseToProjectionP99Ms: round(percentile(delays, 99)),
        },
      },
      null,
      2,
    ),
  );
} finally {
  for (const p of processes) await p.stop();
  await admin.disconnect().catch(() => {});
  const leftovers = await listObjects(prefix).catch(() => []);
  for (let i = 0; i < leftovers.length; i += 1000) {
    await s3.send(
      new DeleteObjectsCommand({
        Bucket: bucket,
        Delete: { Objects: leftovers.slice(i, i + 1000).map((o) => ({ Key: o.key })) },
      }),
    );
  }
  await deleteTopics(
    kafkaBrokers(),
    cells.flatMap((c) => Object.values(cellTopics(c))),
  ).catch(() => {});
  await cpDb.drop();
  for (const d of cellDbs) await d.drop();
}
