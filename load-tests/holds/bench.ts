/**
 * Hold throughput over HTTP beside the raw limit of the same transaction in pgbench, on the
 * same PostgreSQL, in one run, then the hold latency at half the HTTP path's saturated rate
 * (arrivals on a schedule, open loop). `pnpm bench:holds` (services up first; pgbench is
 * installed by `scripts/platform install-references` when missing). Knobs: BENCH_HOLDS
 * (HTTP holds to attempt), BENCH_CONCURRENCY (buyers in flight), BENCH_POOL (the cell's pool
 * and pgbench's client count), BENCH_HALF_SECONDS (the half-rate phase), BENCH_RUNTIME=tsx.
 * Then GA holds/s on one hot general-admission area, striped and as one counter row (ga-phase.ts).
 */
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../../scripts/local-platform/launch';
import { startCellApiProcess } from '../../test/support/cell-process';
import { createTestDatabase } from '../../test/support/db';
import { startIdentity } from '../../test/support/identity';
import { eventLoad } from '../../test/support/seed';
import { repoRoot, serviceEnv } from '../../test/support/services';
import { reference, runBench, which } from '../lib/harness';
import { keepAlivePool } from '../lib/http';
import { percentile, round, runPool } from '../lib/stats';
import { gaPhases } from './ga-phase';

const HOLDS = Number(process.env.BENCH_HOLDS ?? 8_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const POOL = Number(process.env.BENCH_POOL ?? 16);
const HALF_SECONDS = Number(process.env.BENCH_HALF_SECONDS ?? 10);
const SEATS_PER_HOLD = 2;
const SEATS = 20_000;
const CELL_ID = 'bench';

await runBench('holds', async (bench) => {
  const env = serviceEnv();
  const pgbenchBinary = join(env.PGBIN ?? '/usr/lib/postgresql/15/bin', 'pgbench');
  // Debian's postgresql package (the server's own version of pgbench), installed when missing.
  reference('pgbench', () => which(pgbenchBinary) ?? (existsSync(pgbenchBinary) ? pgbenchBinary : undefined));
  const PORT = await freePort();
  const identity = await startIdentity();
  bench.defer(identity.close);
  const db = await createTestDatabase('bench_holds', 'cell');
  bench.defer(db.drop);
  const cell = await startCellApiProcess(identity, {
    cellId: CELL_ID,
    port: PORT,
    poolSize: POOL,
    database: db,
    runtime: bench.runtime,
    spawned: bench.started,
  });
  // The load generator's own CPU comes out of the same two cores: undici's pool, not fetch's web streams.
  const cellHttp = keepAlivePool(`http://127.0.0.1:${PORT}`, CONCURRENCY);
  bench.defer(() => cellHttp.close());

  const httpEvent = eventLoad(SEATS);
  const sqlEvent = eventLoad(SEATS);
  const halfEvent = eventLoad(SEATS);
  for (const load of [httpEvent, sqlEvent, halfEvent]) await cell.loadEvent(load);

  // Tokens are minted before the clock starts: the waiting room's work is not the cell's.
  const holds = Math.min(HOLDS, SEATS / SEATS_PER_HOLD);
  const buyers = await Promise.all(
    Array.from({ length: holds }, async (_, i) => {
      const userId = `bench-${i}`;
      return {
        bearer: await identity.buyerToken(userId),
        admission: await identity.admissionToken({ sub: userId, eventId: httpEvent.eventId, purchaseCell: CELL_ID }),
        seatIds: httpEvent.seats.slice(i * SEATS_PER_HOLD, (i + 1) * SEATS_PER_HOLD).map((s) => s.id),
      };
    }),
  );

  const statuses = new Map<number, number>();
  const hold = async (b: (typeof buyers)[number], eventId: string, into: Map<number, number>) => {
    const res = await cellHttp.request(`/events/${eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${b.bearer}`,
        'x-admission-token': b.admission,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds: b.seatIds }),
    });
    into.set(res.status, (into.get(res.status) ?? 0) + 1);
  };
  const started = performance.now();
  const { durations, cpu: httpCpu } = await bench.measured(async () => ({
    durations: await runPool(holds, CONCURRENCY, (i) => hold(buyers[i]!, httpEvent.eventId, statuses)),
  }));
  const httpSeconds = (performance.now() - started) / 1000;
  const http = {
    holds: statuses.get(202) ?? 0,
    statuses: Object.fromEntries(statuses),
    holdsPerSecond: round((statuses.get(202) ?? 0) / httpSeconds),
    p50Ms: round(percentile(durations, 50), 2),
    p99Ms: round(percentile(durations, 99), 2),
    cpu: httpCpu,
  };

  // pgbench: the same statements on the other 20,000-seat event, as many clients as the cell's pool.
  await db.query('CREATE TABLE bench_seat_numbers (n int PRIMARY KEY, seat_id uuid NOT NULL)');
  await db.query('CREATE SEQUENCE bench_hold_seq');
  await db.query(
    'INSERT INTO bench_seat_numbers SELECT row_number() OVER (ORDER BY id), id FROM seats WHERE event_id = $1',
    [sqlEvent.eventId],
  );
  const work = mkdtempSync(join(tmpdir(), 'pgbench-'));
  const script = join(work, 'hold.sql');
  writeFileSync(
    script,
    readFileSync(resolve(repoRoot, 'load-tests/holds/hold.pgbench.sql'), 'utf8')
      .replaceAll('{{CELL_ID}}', CELL_ID)
      .replaceAll('{{EVENT_ID}}', sqlEvent.eventId),
  );
  const perClient = Math.floor(holds / POOL);
  const { output, cpu: pgbenchCpu } = await bench.measured(async () => ({
    output: await bench.exec(
      'pgbench',
      pgbenchBinary,
      [
        '-n',
        '-f',
        script,
        '-c',
        String(POOL),
        '-j',
        '2',
        '-t',
        String(perClient),
        '-l',
        '--log-prefix',
        join(work, 'log'),
        db.url,
      ],
      { cwd: work },
    ),
  }));
  const latencies: number[] = [];
  for (const f of readdirSync(work).filter((n) => n.startsWith('log'))) {
    for (const line of readFileSync(join(work, f), 'utf8').trim().split('\n'))
      latencies.push(Number(line.split(' ')[2]) / 1000);
  }
  const tps = Number(/tps = ([\d.]+)/.exec(output)?.[1]);
  const held = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM holds WHERE event_id = $1 AND status = 'active'`,
    [sqlEvent.eventId],
  );
  const pgbench = {
    holds: held[0]!.n,
    holdsPerSecond: round(tps),
    p50Ms: round(percentile(latencies, 50), 2),
    p99Ms: round(percentile(latencies, 99), 2),
    cpu: pgbenchCpu,
  };

  // Half the saturated HTTP rate, arriving on schedule whatever the answers take: the latency a buyer sees
  // when the cell is busy but not overrun (the target's "p99 < 50 ms at half the max rate").
  const halfRate = Math.max(1, Math.floor(http.holdsPerSecond / 2));
  const halfCount = Math.min(Math.floor(SEATS / SEATS_PER_HOLD), Math.round(halfRate * HALF_SECONDS));
  const halfBuyers = await Promise.all(
    Array.from({ length: halfCount }, async (_, i) => {
      const userId = `bench-half-${i}`;
      return {
        bearer: await identity.buyerToken(userId),
        admission: await identity.admissionToken({ sub: userId, eventId: halfEvent.eventId, purchaseCell: CELL_ID }),
        seatIds: halfEvent.seats.slice(i * SEATS_PER_HOLD, (i + 1) * SEATS_PER_HOLD).map((s) => s.id),
      };
    }),
  );
  const halfStatuses = new Map<number, number>();
  const halfDurations: number[] = [];
  const halfStarted = performance.now();
  const inflight: Promise<void>[] = [];
  for (let i = 0; i < halfCount; i++) {
    const wait = halfStarted + (i * 1000) / halfRate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const t0 = performance.now();
    inflight.push(
      hold(halfBuyers[i]!, halfEvent.eventId, halfStatuses).then(() => {
        halfDurations.push(performance.now() - t0);
      }),
    );
  }
  await Promise.all(inflight);
  const halfRateResult = {
    offeredPerSecond: halfRate,
    achievedPerSecond: round(halfCount / ((performance.now() - halfStarted) / 1000)),
    holds: halfStatuses.get(202) ?? 0,
    statuses: Object.fromEntries(halfStatuses),
    p50Ms: round(percentile(halfDurations, 50), 2),
    p99Ms: round(percentile(halfDurations, 99), 2),
  };

  // General admission: the same number of holds on one hot area, its count striped (the cell's
  // layout) and collapsed into one row, beside the seated figure above (ga-phase.ts).
  const ga = await gaPhases({
    identity,
    cellId: CELL_ID,
    http: cellHttp,
    db,
    loadEvent: cell.loadEvent,
    holds,
    concurrency: CONCURRENCY,
    placesPerHold: SEATS_PER_HOLD,
    pgbench: { exec: bench.exec, binary: pgbenchBinary, clients: POOL },
  });

  const oversold = await db.query(
    `SELECT seat_id FROM hold_seats WHERE released_at IS NULL GROUP BY seat_id HAVING count(*) > 1`,
  );
  return {
    machine: { cpus: (await import('node:os')).cpus().length },
    settings: { holds, concurrency: CONCURRENCY, pool: POOL, seatsPerHold: SEATS_PER_HOLD, seatsPerEvent: SEATS },
    http,
    pgbench,
    halfRate: halfRateResult,
    ratio: {
      throughput: round(http.holdsPerSecond / pgbench.holdsPerSecond, 3),
      p50: round(http.p50Ms / pgbench.p50Ms, 2),
    },
    ga,
    holdsPerSecond: {
      http: {
        seated: http.holdsPerSecond,
        gaStriped: ga.http.striped.holdsPerSecond,
        gaOneRow: ga.http.oneRow.holdsPerSecond,
      },
      pgbench: {
        seated: pgbench.holdsPerSecond,
        gaStriped: ga.pgbench.striped.holdsPerSecond,
        gaOneRow: ga.pgbench.oneRow.holdsPerSecond,
      },
    },
    seatsInTwoActiveHolds: oversold.length,
  };
});
