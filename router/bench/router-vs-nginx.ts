/**
 * What the router adds to a hold, beside nginx as a plain reverse proxy to the same cell, in one run: the same holds
 * (distinct seats, a buyer JWT and an admission token each) sent direct to the cell, through the router and through
 * nginx, at the same concurrency. The cell, the router and nginx each run as their own process, as in production.
 *
 *   npx tsx router/bench/router-vs-nginx.ts        (services up first; nginx from Debian's package)
 *
 * The paths take turns in rounds, in rotating order, so the cell's growing tables and any drift of a shared machine
 * fall on all three alike.
 *
 * Knobs: BENCH_HOLDS (measured holds per path), BENCH_ROUNDS, BENCH_WARMUP (holds per path before measuring),
 * BENCH_CONCURRENCY (requests in flight), BENCH_POOL (the cell's database pool).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { resolve } from 'node:path';
import { Agent, request } from 'undici';
import { percentile, round } from '../../load-tests/lib/stats';
import { startProcess } from '../../scripts/local-platform/process';
import { startCellApiProcess } from '../../test/support/cell-process';
import { createTestDatabase } from '../../test/support/db';
import { startIdentity } from '../../test/support/identity';
import { eventLoad } from '../../test/support/seed';
import { repoRoot } from '../../test/support/services';
import { startFakeControlPlane } from '../test/fakes';

const HOLDS = Number(process.env.BENCH_HOLDS ?? 3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const POOL = Number(process.env.BENCH_POOL ?? 16);
const SEATS_PER_HOLD = 2;
const CELL_ID = 'bench';
const CELL_PORT = 18_281;
const ROUTER_PORT = 18_282;
const NGINX_PORT = 18_283;
const PATHS = ['direct', 'router', 'nginx'] as const;
type Path = (typeof PATHS)[number];

const db = await createTestDatabase('bench_router');
const identity = await startIdentity();
const controlPlane = await startFakeControlPlane();
const cellUrl = `http://127.0.0.1:${CELL_PORT}`;
const stops: (() => Promise<void>)[] = [];

try {
  const cell = await startCellApiProcess(identity, { cellId: CELL_ID, port: CELL_PORT, poolSize: POOL, database: db });
  stops.push(cell.api.stop);

  const perPath = WARMUP + HOLDS;
  const event = eventLoad(perPath * PATHS.length * SEATS_PER_HOLD);
  await cell.loadEvent(event);

  controlPlane.addCell(CELL_ID, cellUrl);
  controlPlane.placeEvent(event.eventId, CELL_ID);
  const router = await startProcess(
    'router/src/main.ts',
    {
      PORT: String(ROUTER_PORT),
      CONTROL_PLANE_URL: controlPlane.url,
      ADMISSION_JWKS_URL: identity.admissionJwksUrl,
      LOG_LEVEL: 'warn',
    },
    { readyUrl: `http://127.0.0.1:${ROUTER_PORT}/readyz` },
  );
  stops.push(router.stop);
  stops.push(await startNginx());

  // Tokens are minted before any clock starts: the waiting room's work is no proxy's.
  const buyers = await Promise.all(
    Array.from({ length: perPath * PATHS.length }, async (_, i) => {
      const userId = `bench-${i}`;
      return {
        bearer: await identity.buyerToken(userId),
        admission: await identity.admissionToken({ sub: userId, eventId: event.eventId, purchaseCell: CELL_ID }),
        body: JSON.stringify({
          seatIds: event.seats.slice(i * SEATS_PER_HOLD, (i + 1) * SEATS_PER_HOLD).map((s) => s.id),
        }),
      };
    }),
  );
  const origins: Record<Path, string> = {
    direct: cellUrl,
    router: `http://127.0.0.1:${ROUTER_PORT}`,
    nginx: `http://127.0.0.1:${NGINX_PORT}`,
  };
  // The client keeps as many connections as requests in flight, to each front, for every path alike.
  const client = new Agent({ connections: CONCURRENCY, pipelining: 1 });

  let nextBuyer = 0;
  /** Sends `count` holds (each with fresh buyers and seats) through one path; returns each latency and the wall time. */
  async function run(
    path: Path,
    count: number,
    into?: { durations: number[]; seconds: number; statuses: Record<number, number> },
  ) {
    const end = nextBuyer + count;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (nextBuyer < end) {
          const b = buyers[nextBuyer++]!;
          const t0 = performance.now();
          const res = await request(`${origins[path]}/events/${event.eventId}/holds`, {
            dispatcher: client,
            method: 'POST',
            headers: {
              authorization: `Bearer ${b.bearer}`,
              'x-admission-token': b.admission,
              'idempotency-key': randomUUID(),
              'content-type': 'application/json',
            },
            body: b.body,
          });
          await res.body.dump();
          if (!into) continue;
          into.durations.push(performance.now() - t0);
          into.statuses[res.statusCode] = (into.statuses[res.statusCode] ?? 0) + 1;
        }
      }),
    );
    if (into) into.seconds += (performance.now() - started) / 1000;
  }

  const samples = Object.fromEntries(
    PATHS.map((p) => [p, { durations: [] as number[], seconds: 0, statuses: {} as Record<number, number> }]),
  ) as Record<Path, { durations: number[]; seconds: number; statuses: Record<number, number> }>;
  for (const path of PATHS) await run(path, WARMUP);
  const perRound = Math.floor(HOLDS / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < PATHS.length; k++)
      await run(PATHS[(r + k) % PATHS.length]!, perRound, samples[PATHS[(r + k) % PATHS.length]!]);
  }
  const results = Object.fromEntries(
    PATHS.map((p) => {
      const s = samples[p];
      return [
        p,
        {
          holds: s.statuses[202] ?? 0,
          statuses: s.statuses,
          reqPerSecond: round(s.durations.length / s.seconds),
          p50Ms: round(percentile(s.durations, 50), 2),
          p99Ms: round(percentile(s.durations, 99), 2),
        },
      ];
    }),
  ) as Record<
    Path,
    { holds: number; statuses: Record<number, number>; reqPerSecond: number; p50Ms: number; p99Ms: number }
  >;
  await client.close();

  const { direct, router: viaRouter, nginx } = results;
  const oversold = await db.query(
    `SELECT seat_id FROM hold_seats WHERE released_at IS NULL GROUP BY seat_id HAVING count(*) > 1`,
  );
  console.log(
    JSON.stringify(
      {
        machine: { cpus: cpus().length, model: cpus()[0]?.model },
        settings: {
          holds: perRound * ROUNDS,
          rounds: ROUNDS,
          warmup: WARMUP,
          concurrency: CONCURRENCY,
          pool: POOL,
          seatsPerHold: SEATS_PER_HOLD,
        },
        results,
        ratios: {
          routerThroughputVsDirect: round(viaRouter.reqPerSecond / direct.reqPerSecond, 3),
          nginxThroughputVsDirect: round(nginx.reqPerSecond / direct.reqPerSecond, 3),
          routerThroughputVsNginx: round(viaRouter.reqPerSecond / nginx.reqPerSecond, 3),
          routerAddedP50Ms: round(viaRouter.p50Ms - direct.p50Ms, 2),
          nginxAddedP50Ms: round(nginx.p50Ms - direct.p50Ms, 2),
          routerAddedP99Ms: round(viaRouter.p99Ms - direct.p99Ms, 2),
          nginxAddedP99Ms: round(nginx.p99Ms - direct.p99Ms, 2),
        },
        seatsInTwoActiveHolds: oversold.length,
      },
      null,
      2,
    ),
  );
} finally {
  for (const stop of stops.reverse()) await stop();
  await controlPlane.close();
  await identity.close();
  await db.drop();
}

/** nginx as a plain keep-alive reverse proxy to the cell: one worker (the router is one Node process), no logs. */
async function startNginx(): Promise<() => Promise<void>> {
  const prefix = resolve(repoRoot, '.data/bench-nginx');
  mkdirSync(resolve(prefix, 'logs'), { recursive: true });
  const conf = resolve(prefix, 'nginx.conf');
  writeFileSync(
    conf,
    `daemon off;
worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path ${prefix}/client_body;
  proxy_temp_path ${prefix}/proxy;
  fastcgi_temp_path ${prefix}/fastcgi;
  uwsgi_temp_path ${prefix}/uwsgi;
  scgi_temp_path ${prefix}/scgi;
  upstream cell { server 127.0.0.1:${CELL_PORT}; keepalive 64; }
  server {
    listen 127.0.0.1:${NGINX_PORT};
    location / {
      proxy_pass http://cell;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
    }
  }
}
`,
  );
  const child: ChildProcess = spawn('nginx', ['-p', prefix, '-c', conf], { stdio: ['ignore', 'ignore', 'inherit'] });
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode}`);
    try {
      await fetch(`http://127.0.0.1:${NGINX_PORT}/`);
      break;
    } catch {}
    if (Date.now() > deadline) throw new Error('nginx did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
  const pid = Number(readFileSync(resolve(prefix, 'nginx.pid'), 'utf8'));
  return () =>
    new Promise<void>((r) => {
      if (child.exitCode !== null) return r();
      child.once('exit', () => r());
      // The master's own PID, from its pid file: SIGQUIT lets in-flight requests finish, then it exits.
      process.kill(pid, 'SIGQUIT');
    });
}
