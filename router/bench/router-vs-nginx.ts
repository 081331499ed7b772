/**
 * What the router adds to a hold, beside nginx as a plain reverse proxy to the same cell, in one run: the same holds
 * (distinct seats, a buyer JWT and an admission token each) sent direct to the cell, through the router, through
 * nginx and through a floor (the least a Node proxy does, proxy-floor.ts), at the same concurrency. The cell, the
 * router, nginx and the floor each run as their own process, as in production.
 *
 *   npx tsx router/bench/router-vs-nginx.ts        (services up first; nginx from Debian's package)
 *
 * The paths take turns in rounds, in rotating order, so the cell's growing tables and any drift of a shared machine
 * fall on all three alike. Saturation first (BENCH_CONCURRENCY in flight, as fast as each path answers), then half
 * load: holds arriving at half the slowest path's saturated rate, the same rate on every path.
 *
 * Knobs: BENCH_HOLDS (measured holds per path), BENCH_ROUNDS, BENCH_WARMUP (holds per path before measuring),
 * BENCH_CONCURRENCY (requests in flight), BENCH_POOL (the cell's database pool), BENCH_HALF_HOLDS (holds per path
 * at half load), BENCH_NGINX (the nginx binary; installed by `scripts/platform install-references` when missing),
 * BENCH_RUNTIME=tsx (the cell and router under tsx instead of their bundles).
 */
import { randomUUID } from 'node:crypto';
import { cpus } from 'node:os';
import { Agent, request } from 'undici';
import { type CpuReading, mergeReadings } from '../../load-tests/lib/cpu';
import { reference, runBench } from '../../load-tests/lib/harness';
import { percentile, round } from '../../load-tests/lib/stats';
import { startProcess } from '../../scripts/local-platform/process';
import { startCellApiProcess } from '../../test/support/cell-process';
import { createTestDatabase } from '../../test/support/db';
import { startIdentity } from '../../test/support/identity';
import { eventLoad } from '../../test/support/seed';
import { startFakeControlPlane } from '../test/fakes';
import { startNginx } from './nginx';

const HOLDS = Number(process.env.BENCH_HOLDS ?? 3_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_WARMUP ?? 300);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
const POOL = Number(process.env.BENCH_POOL ?? 16);
const HALF_HOLDS = Number(process.env.BENCH_HALF_HOLDS ?? 1_000);
const SEATS_PER_HOLD = 2;
const CELL_ID = 'bench';
const CELL_PORT = 18_281;
const ROUTER_PORT = 18_282;
const NGINX_PORT = 18_283;
const FLOOR_PORT = 18_284;
/** The router's health port: its /metrics (router_own_duration_seconds) are there, not on the port holds go through. */
const ROUTER_HEALTH_PORT = 18_285;
const ROUTER_METRICS = `http://127.0.0.1:${ROUTER_HEALTH_PORT}/metrics`;
const PATHS = ['direct', 'router', 'nginx', 'floor'] as const;
type Path = (typeof PATHS)[number];

await runBench('router', async (bench) => {
  const nginxBinary = process.env.BENCH_NGINX ?? reference('nginx');
  const db = await createTestDatabase('bench_router');
  bench.defer(db.drop);
  const identity = await startIdentity();
  bench.defer(identity.close);
  const controlPlane = await startFakeControlPlane();
  bench.defer(controlPlane.close);
  const cellUrl = `http://127.0.0.1:${CELL_PORT}`;

  const cell = await startCellApiProcess(identity, {
    cellId: CELL_ID,
    port: CELL_PORT,
    poolSize: POOL,
    database: db,
    runtime: bench.runtime,
    spawned: bench.started,
  });

  const perPath = WARMUP + HOLDS + HALF_HOLDS;
  const event = eventLoad(perPath * PATHS.length * SEATS_PER_HOLD);
  await cell.loadEvent(event);

  controlPlane.addCell(CELL_ID, cellUrl);
  controlPlane.placeEvent(event.eventId, CELL_ID);
  await startProcess(
    'router/src/main.ts',
    {
      PORT: String(ROUTER_PORT),
      HEALTH_PORT: String(ROUTER_HEALTH_PORT),
      CONTROL_PLANE_URL: controlPlane.url,
      ADMISSION_JWKS_URL: identity.admissionJwksUrl,
      LOG_LEVEL: 'warn',
    },
    {
      name: 'router',
      readyUrl: `http://127.0.0.1:${ROUTER_PORT}/readyz`,
      command: bench.command('router/src/main.ts'),
      spawned: bench.started,
    },
  );
  await startNginx(nginxBinary, { port: NGINX_PORT, upstreamPort: CELL_PORT }, bench.started);
  await startProcess(
    'router/bench/proxy-floor.ts',
    { PORT: String(FLOOR_PORT), UPSTREAM: cellUrl },
    { name: 'proxy-floor', readyUrl: `http://127.0.0.1:${FLOOR_PORT}/healthz`, spawned: bench.started },
  );

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
    floor: `http://127.0.0.1:${FLOOR_PORT}`,
  };
  // The client keeps as many connections as requests in flight, to each front, for every path alike.
  const client = new Agent({ connections: CONCURRENCY, pipelining: 1 });
  bench.defer(() => client.close());

  /** `cpu`: where the cores went in each round this path was driven at saturation (cpu.ts). */
  type Sample = { durations: number[]; seconds: number; statuses: Record<number, number>; cpu: CpuReading[] };
  let nextBuyer = 0;
  /** One hold with the next fresh buyer and seats through one path. */
  async function hold(path: Path, into?: Sample) {
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
    if (!into) return;
    into.durations.push(performance.now() - t0);
    into.statuses[res.statusCode] = (into.statuses[res.statusCode] ?? 0) + 1;
  }
  /** Sends `count` holds through one path, CONCURRENCY in flight (saturation); adds each latency and the wall time. */
  async function run(path: Path, count: number, into?: Sample) {
    const end = nextBuyer + count;
    const started = performance.now();
    const { cpu } = await bench.measured(async () => {
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (nextBuyer < end) await hold(path, into);
        }),
      );
      return {};
    });
    if (!into) return;
    into.seconds += (performance.now() - started) / 1000;
    into.cpu.push(cpu);
  }
  /** Sends `count` holds through one path at `rate` per second, on schedule whatever the answers take (open loop). */
  async function paced(path: Path, count: number, rate: number, into: Sample) {
    const started = performance.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < count; i++) {
      const wait = started + (i * 1000) / rate - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(hold(path, into));
    }
    await Promise.all(inflight);
    into.seconds += (performance.now() - started) / 1000;
  }
  const summary = (s: Sample) => ({
    holds: s.statuses[202] ?? 0,
    statuses: s.statuses,
    reqPerSecond: round(s.durations.length / s.seconds),
    p50Ms: round(percentile(s.durations, 50), 2),
    p99Ms: round(percentile(s.durations, 99), 2),
    cpu: mergeReadings(s.cpu),
  });

  const empty = () =>
    Object.fromEntries(
      PATHS.map((p) => [p, { durations: [], seconds: 0, statuses: {}, cpu: [] }]),
    ) as unknown as Record<Path, Sample>;
  const samples = empty();
  for (const path of PATHS) await run(path, WARMUP);
  const perRound = Math.floor(HOLDS / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < PATHS.length; k++)
      await run(PATHS[(r + k) % PATHS.length]!, perRound, samples[PATHS[(r + k) % PATHS.length]!]);
  }
  const results = Object.fromEntries(PATHS.map((p) => [p, summary(samples[p])])) as Record<
    Path,
    ReturnType<typeof summary>
  >;
  const { direct, router: viaRouter, nginx } = results;

  // Half load: half the slowest path's saturated rate, offered to each path in turn.
  const halfRate = Math.max(1, Math.floor(Math.min(...PATHS.map((p) => results[p].reqPerSecond)) / 2));
  const half = empty();
  const perHalfRound = Math.floor(HALF_HOLDS / ROUNDS);
  const ownBefore = await ownTime(ROUTER_METRICS);
  for (let r = 0; r < ROUNDS; r++) {
    for (let k = 0; k < PATHS.length; k++) {
      const path = PATHS[(r + k) % PATHS.length]!;
      await paced(path, perHalfRound, halfRate, half[path]);
    }
  }
  const routerOwnP50Ms = round(medianBetween(ownBefore, await ownTime(ROUTER_METRICS)) * 1000, 3);
  const halfResults = Object.fromEntries(PATHS.map((p) => [p, summary(half[p])])) as Record<
    Path,
    ReturnType<typeof summary>
  >;
  const oversold = await db.query(
    `SELECT seat_id FROM hold_seats WHERE released_at IS NULL GROUP BY seat_id HAVING count(*) > 1`,
  );
  const added = (r: Record<Path, ReturnType<typeof summary>>) => ({
    routerAddedP50Ms: round(r.router.p50Ms - r.direct.p50Ms, 2),
    nginxAddedP50Ms: round(r.nginx.p50Ms - r.direct.p50Ms, 2),
    routerAddedP99Ms: round(r.router.p99Ms - r.direct.p99Ms, 2),
    nginxAddedP99Ms: round(r.nginx.p99Ms - r.direct.p99Ms, 2),
    floorAddedP50Ms: round(r.floor.p50Ms - r.direct.p50Ms, 2),
    floorAddedP99Ms: round(r.floor.p99Ms - r.direct.p99Ms, 2),
  });
  return {
    machine: { cpus: cpus().length, model: cpus()[0]?.model },
    settings: {
      holds: perRound * ROUNDS,
      rounds: ROUNDS,
      warmup: WARMUP,
      concurrency: CONCURRENCY,
      pool: POOL,
      seatsPerHold: SEATS_PER_HOLD,
      halfLoad: { holdsPerPath: perHalfRound * ROUNDS, ratePerSecond: halfRate },
    },
    results,
    halfLoad: halfResults,
    ratios: {
      routerThroughputVsDirect: round(viaRouter.reqPerSecond / direct.reqPerSecond, 3),
      nginxThroughputVsDirect: round(nginx.reqPerSecond / direct.reqPerSecond, 3),
      routerThroughputVsNginx: round(viaRouter.reqPerSecond / nginx.reqPerSecond, 3),
      floorThroughputVsNginx: round(results.floor.reqPerSecond / nginx.reqPerSecond, 3),
      ...added(results),
      halfLoad: { ...added(halfResults), routerOwnP50Ms },
    },
    seatsInTwoActiveHolds: oversold.length,
  };
});

/** The router's own-time histogram for the bench cell (router_own_duration_seconds), as cumulative counts by bound. */
async function ownTime(routerMetrics: string): Promise<Map<number, number>> {
  const res = await fetch(routerMetrics);
  if (!res.ok) throw new Error(`the router's /metrics answered ${res.status}`);
  const text = await res.text();
  const counts = new Map<number, number>();
  // The labels in whichever order the exposition writes them.
  const series = /^router_own_duration_seconds_bucket\{([^}]*)\} (\d+)$/;
  for (const line of text.split('\n')) {
    const m = series.exec(line);
    const labels = Object.fromEntries([...(m?.[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v]));
    if (!m || labels.cell !== CELL_ID || labels.le === undefined) continue;
    counts.set(labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(labels.le), Number(m[2]));
  }
  return counts;
}

/**
 * The median of what was observed between two readings of a cumulative histogram, interpolated linearly inside its
 * bucket as Prometheus's histogram_quantile does.
 */
function medianBetween(before: Map<number, number>, after: Map<number, number>): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const delta = (le: number) => (after.get(le) ?? 0) - (before.get(le) ?? 0);
  const total = delta(Number.POSITIVE_INFINITY);
  if (!total) return Number.NaN;
  let lower = 0;
  let below = 0;
  for (const le of bounds) {
    const upTo = delta(le);
    if (upTo >= total / 2)
      return le === Number.POSITIVE_INFINITY ? lower : lower + ((le - lower) * (total / 2 - below)) / (upTo - below);
    lower = le;
    below = upTo;
  }
  return lower;
}
