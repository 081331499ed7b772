/**
 * Hold throughput over HTTP beside the raw limit of the same transaction in pgbench, on the
 * same PostgreSQL, in one run. `pnpm bench:holds` (services up first). Knobs: BENCH_HOLDS
 * (HTTP holds to attempt), BENCH_CONCURRENCY (buyers in flight), BENCH_POOL (the cell's pool
 * and pgbench's client count), BENCH_SEATS_PER_HOLD.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, setGlobalDispatcher } from 'undici';
import { startCellApiProcess } from '../../test/support/cell-process';
import { startIdentity } from '../../test/support/identity';
import { eventLoad } from '../../test/support/seed';
import { repoRoot, serviceEnv } from '../../test/support/services';
import { percentile, round, runPool } from '../lib/stats';

const HOLDS = Number(process.env.BENCH_HOLDS ?? 8_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const POOL = Number(process.env.BENCH_POOL ?? 16);
const SEATS_PER_HOLD = 2;
const SEATS = 20_000;
const CELL_ID = 'bench';
const PORT = 18_181;

const env = serviceEnv();
const identity = await startIdentity();
setGlobalDispatcher(new Agent({ connections: CONCURRENCY * 2, pipelining: 1 }));
const cell = await startCellApiProcess(identity, { cellId: CELL_ID, port: PORT, poolSize: POOL });
const { db } = cell;

try {
  const httpEvent = eventLoad(SEATS);
  const sqlEvent = eventLoad(SEATS);
  for (const load of [httpEvent, sqlEvent]) await cell.loadEvent(load);

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
  const started = performance.now();
  const durations = await runPool(holds, CONCURRENCY, async (i) => {
    const b = buyers[i]!;
    const res = await fetch(`http://127.0.0.1:${PORT}/events/${httpEvent.eventId}/holds`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${b.bearer}`,
        'x-admission-token': b.admission,
        'idempotency-key': randomUUID(),
        'content-type': 'application/json',
      },
      body: JSON.stringify({ seatIds: b.seatIds }),
    });
    await res.arrayBuffer();
    statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  });
  const httpSeconds = (performance.now() - started) / 1000;
  const http = {
    holds: statuses.get(202) ?? 0,
    statuses: Object.fromEntries(statuses),
    holdsPerSecond: round((statuses.get(202) ?? 0) / httpSeconds),
    p50Ms: round(percentile(durations, 50), 2),
    p99Ms: round(percentile(durations, 99), 2),
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
  const output = execFileSync(
    join(env.PGBIN ?? '/usr/lib/postgresql/15/bin', 'pgbench'),
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
    { cwd: work, encoding: 'utf8' },
  );
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
  };
  const oversold = await db.query(
    `SELECT seat_id FROM hold_seats WHERE released_at IS NULL GROUP BY seat_id HAVING count(*) > 1`,
  );

  console.log(
    JSON.stringify(
      {
        machine: { cpus: (await import('node:os')).cpus().length },
        settings: { holds, concurrency: CONCURRENCY, pool: POOL, seatsPerHold: SEATS_PER_HOLD, seatsPerEvent: SEATS },
        http,
        pgbench,
        ratio: {
          throughput: round(http.holdsPerSecond / pgbench.holdsPerSecond, 3),
          p50: round(http.p50Ms / pgbench.p50Ms, 2),
        },
        seatsInTwoActiveHolds: oversold.length,
      },
      null,
      2,
    ),
  );
} finally {
  await cell.api.stop();
  await identity.close();
  await db.drop();
}
