/**
 * `pnpm bench:all [--runs 3] [--only holds,relay] [--quick] [--runtime tsx] [--from dir,...]`: every benchmark, each
 * beside the reference it measures in the same run (pgbench, Kafka's ProducerPerformance,
 * redis-benchmark and a bare Node HTTP server, nginx), written as a dated report (JSON and
 * markdown) under load-tests/reports/ with the targets of issue 19 beside each figure.
 *
 * With --runs N every benchmark runs N times; each row reports the run whose figure is the median,
 * so a ratio and its reference always come from the same run. --quick shrinks every benchmark to
 * seconds (a smoke test of the harness, not a measurement). The benchmarks run one after the other:
 * on two cores, two at once would measure each other.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { CpuReading } from '../../load-tests/lib/cpu';
import { repoRoot } from '../local-platform/process';

const BENCHES = {
  holds: 'load-tests/holds/bench.ts',
  relay: 'load-tests/relay/bench.ts',
  router: 'router/bench/router-vs-nginx.ts',
  'proxy-cost': 'router/bench/proxy-cost.ts',
  'waiting-room': 'control-plane/bench/waiting-room.ts',
} as const;
type BenchName = keyof typeof BENCHES;

/** Each benchmark shrunk to seconds for --quick. */
const QUICK: Record<BenchName, Record<string, string>> = {
  holds: { BENCH_HOLDS: '400', BENCH_HALF_SECONDS: '2' },
  relay: { BENCH_EVENTS: '2000', BENCH_HOLD_RATE: '20', BENCH_HOLD_SECONDS: '2', BENCH_OUTBOX_SECONDS: '2' },
  router: { BENCH_HOLDS: '150', BENCH_WARMUP: '30', BENCH_HALF_HOLDS: '60' },
  'proxy-cost': { BENCH_REQUESTS: '500', BENCH_ROUNDS: '1', BENCH_RATE_SECONDS: '1' },
  'waiting-room': { BUYERS: '2000', HTTP_REQUESTS: '2000', REDIS_BENCH_REQUESTS: '5000' },
};

// biome-ignore lint/suspicious/noExplicitAny: a benchmark's JSON, read by the paths below
type Result = any;

export interface Row {
  bench: BenchName;
  path: string;
  measure: string;
  value: number;
  unit: string;
  reference?: { name: string; value: number };
  ratio?: number;
  target: string;
  met: boolean;
  /** Where the cores went while the figure and its reference were measured (load-tests/lib/cpu.ts). */
  cpu?: { measured?: CpuReading; reference?: CpuReading };
}

/** The figures of issue 19's table, each from one benchmark's result, with its reference from the same run. */
export function rows(bench: BenchName, r: Result): Row[] {
  const ratio = (a: number, b: number) => Math.round((a / b) * 1000) / 1000;
  const vs = (
    path: string,
    measure: string,
    value: number,
    unit: string,
    ref: { name: string; value: number },
    min: number,
    cpu?: Row['cpu'],
  ): Row => {
    const q = ratio(value, ref.value);
    return {
      bench,
      path,
      measure,
      value,
      unit,
      reference: ref,
      ratio: q,
      target: `≥ ${min} of reference`,
      met: q >= min,
      cpu,
    };
  };
  /** A figure shown beside its reference for what it explains, with no target of its own. */
  const information = (
    path: string,
    measure: string,
    value: number,
    unit: string,
    ref: { name: string; value: number },
    cpu?: Row['cpu'],
  ): Row => ({ ...vs(path, measure, value, unit, ref, 0, cpu), target: '(information)', met: true });
  const limit = (path: string, measure: string, value: number, unit: string, target: string, met: boolean): Row => ({
    bench,
    path,
    measure,
    value,
    unit,
    target,
    met,
  });
  switch (bench) {
    case 'holds':
      return [
        vs(
          'hold API, 2 seats, 32 in flight',
          'holds/s',
          r.http.holdsPerSecond,
          '/s',
          {
            name: 'pgbench, same SQL',
            value: r.pgbench.holdsPerSecond,
          },
          0.5,
          { measured: r.http.cpu, reference: r.pgbench.cpu },
        ),
        limit(
          'hold API at half the max rate',
          `p99 at ${r.halfRate.offeredPerSecond}/s offered`,
          r.halfRate.p99Ms,
          'ms',
          '< 50 ms',
          r.halfRate.p99Ms < 50,
        ),
      ];
    case 'relay':
      return [
        vs(
          'outbox → Kafka',
          'events/s',
          r.relay.eventsPerSecond,
          '/s',
          {
            name: "Kafka's ProducerPerformance",
            value: r.producerPerformance.recordsPerSecond,
          },
          0.5,
          { measured: r.relay.cpu, reference: r.producerPerformance.cpu },
        ),
        limit(
          'outbox age at 1,000 events/s',
          `p99 at ${r.fixedOutboxRate.eventsPerSecond}/s written`,
          r.fixedOutboxRate.outboxAgeP99Ms,
          'ms',
          '< 200 ms',
          r.fixedOutboxRate.outboxAgeP99Ms < 200 && r.fixedOutboxRate.unpublished === 0,
        ),
      ];
    case 'waiting-room': {
      const rb = r.redisBenchmark;
      const http = r.httpOverSockets;
      return [
        vs(
          'waiting room joins, in process',
          'joins/s',
          r.joins.perSec,
          '/s',
          {
            name: 'redis-benchmark EVALSHA join -P 1',
            value: rb['EVALSHA join (idempotent) -P 1'].rps,
          },
          0.5,
          { measured: r.joins.cpu },
        ),
        vs(
          'waiting room polls, in process',
          'polls/s',
          r.polls.perSec,
          '/s',
          {
            name: 'redis-benchmark EVALSHA status -P 1',
            value: rb['EVALSHA status -P 1'].rps,
          },
          0.5,
          { measured: r.polls.cpu },
        ),
        limit(
          'Redis per queued buyer',
          `bytes at ${r.memory.queued} queued`,
          r.memory.bytesPerQueuedBuyer,
          'B',
          '≤ 200 B at 100,000 queued',
          r.memory.bytesPerQueuedBuyer <= 200 && r.memory.queued >= 100_000,
        ),
        vs(
          'waiting room polls over HTTP',
          'polls/s',
          http.polls.perSec,
          '/s',
          {
            name: `bare Node HTTP server, ${http.pollBodyBytes} B JSON`,
            value: http.bareNodeServer.perSec,
          },
          0.5,
          { measured: http.polls.cpu, reference: http.bareNodeServer.cpu },
        ),
        {
          ...limit(
            'waiting room joins + polls over HTTP',
            'requests/s',
            http.mixed.perSec,
            '/s',
            '≥ 10,000/s',
            http.mixed.perSec >= 10_000,
          ),
          cpu: { measured: http.mixed.cpu },
        },
        // The same two figures from the floor (waiting-room-floor.ts): the room's verbs without the API's HTTP stack.
        information(
          "waiting room polls over HTTP, without the API's HTTP stack",
          'polls/s, the verb alone behind node:http',
          http.floor.polls.perSec,
          '/s',
          { name: 'bare Node HTTP server', value: http.bareNodeServer.perSec },
          { measured: http.floor.polls.cpu },
        ),
        information(
          "waiting room joins + polls over HTTP, without the API's HTTP stack",
          'requests/s, the verbs alone behind node:http',
          http.floor.mixed.perSec,
          '/s',
          { name: 'the API, same mix', value: http.mixed.perSec },
          { measured: http.floor.mixed.cpu },
        ),
      ];
    }
    case 'proxy-cost': {
      // A proxy's CPU per forwarded request with nothing else on the path (proxy-cost.ts): the floor under the router.
      const phases = [
        ['saturation', r.saturation],
        [`${r.settings.rate}/s offered`, r.fixedRate],
      ] as const;
      return phases.flatMap(([phase, figures]) =>
        Object.entries(figures as Record<string, { frontCpuMsPerRequest: number }>)
          .filter(([front]) => front !== 'direct' && front !== 'nginx')
          .map(([front, f]) =>
            information(
              `${front}, CPU per forwarded request, ${phase}`,
              'CPU ms per request (the proxy alone)',
              f.frontCpuMsPerRequest,
              'ms',
              { name: 'nginx, same run', value: figures.nginx.frontCpuMsPerRequest },
            ),
          ),
      );
    }
    case 'router': {
      // Below half a millisecond an added latency is within the noise of one machine: the floor keeps a
      // negative nginx figure (noise) from making any router figure fail.
      const added = (phase: string, router: number, nginx: number, cpu?: Row['cpu']): Row => ({
        bench,
        path: `router added p50 latency, ${phase}`,
        measure: 'added p50 vs direct',
        value: router,
        unit: 'ms',
        reference: { name: 'nginx added p50 vs direct', value: nginx },
        ratio: nginx > 0 ? ratio(router, nginx) : undefined,
        target: '≤ 1.5 × nginx (0.5 ms floor)',
        met: router <= Math.max(1.5 * nginx, 0.5),
        cpu,
      });
      return [
        added('saturation', r.ratios.routerAddedP50Ms, r.ratios.nginxAddedP50Ms, {
          measured: r.results.router.cpu,
          reference: r.results.nginx.cpu,
        }),
        added('half load', r.ratios.halfLoad.routerAddedP50Ms, r.ratios.halfLoad.nginxAddedP50Ms),
        information(
          "router's own time per hold, half load",
          'p50 from its /metrics on its health port (router_own_duration_seconds)',
          r.ratios.halfLoad.routerOwnP50Ms,
          'ms',
          { name: 'router added p50 vs direct', value: r.ratios.halfLoad.routerAddedP50Ms },
        ),
        // The least a Node proxy adds on the same path (proxy-floor.ts): the hop itself, beside what the router adds.
        ...(['saturation', 'half load'] as const).map((phase) => {
          const figures = phase === 'saturation' ? r.ratios : r.ratios.halfLoad;
          return information(
            `a minimal Node proxy's added p50 latency, ${phase}`,
            'added p50 vs direct (node:http in, undici out, nothing checked)',
            figures.floorAddedP50Ms,
            'ms',
            { name: 'router added p50 vs direct', value: figures.routerAddedP50Ms },
            phase === 'saturation' ? { measured: r.results.floor.cpu, reference: r.results.router.cpu } : undefined,
          );
        }),
        information(
          'router throughput at saturation',
          'holds/s through the router',
          r.results.router.reqPerSecond,
          '/s',
          {
            name: 'nginx as a plain reverse proxy',
            value: r.results.nginx.reqPerSecond,
          },
        ),
      ];
    }
  }
}

/**
 * CPU time per request, by process: the capacity model's inputs (capacity/). Each figure is one process's cores
 * while the path ran, divided by the requests per second it answered in that same interval (the /proc utime+stime
 * deltas of cpu.ts): a core-millisecond per request. A process's role names what it is in production (the cell API,
 * the router, PostgreSQL...), whatever the benchmark called it.
 */
export interface PerRequest {
  /** The stable name the capacity model reads this path by. */
  key: string;
  path: string;
  requestsPerSecond: number;
  /** CPU milliseconds per request by role; 'other' is whatever else ran on the machine meanwhile (not the path's). */
  cpuMsByProcess: Record<string, number>;
  machineBusyCores: number;
  machineCores: number;
  seconds: number;
}

/** The roles of the processes the benchmarks start, by the name they start them under. */
const ROLES: Record<string, string> = {
  'cell/src/api/main.ts': 'cell API',
  router: 'router',
  'proxy-floor': 'minimal Node proxy',
  'control-plane-api': 'control plane API',
  'waiting-room-floor': 'waiting room verbs behind node:http',
  'bare-node-http': 'bare Node HTTP server',
  postgresql: 'postgresql',
  redis: 'redis',
  'kafka (java)': 'kafka',
  nginx: 'nginx',
};

export function perRequestOf(
  key: string,
  path: string,
  reading: CpuReading | undefined,
  requestsPerSecond: number,
  /** The load generator's role where it is itself the code under test (the relay runs in the benchmark's process). */
  loadGeneratorIs?: string,
): PerRequest | undefined {
  if (!reading || !(requestsPerSecond > 0)) return undefined;
  const cpuMsByProcess: Record<string, number> = {};
  for (const [who, cores] of Object.entries(reading.coresByProcess)) {
    const role = who === 'load generator (this process)' ? (loadGeneratorIs ?? 'load generator') : (ROLES[who] ?? who);
    cpuMsByProcess[role] = Math.round(((cpuMsByProcess[role] ?? 0) + (cores / requestsPerSecond) * 1000) * 1e4) / 1e4;
  }
  return {
    key,
    path,
    requestsPerSecond,
    cpuMsByProcess,
    machineBusyCores: reading.machineBusyCores,
    machineCores: reading.machineCores,
    seconds: reading.seconds,
  };
}

/** Every path of one benchmark's result that has a CPU reading, as CPU per request by process. */
export function perRequest(bench: BenchName, r: Result): PerRequest[] {
  const all: (PerRequest | undefined)[] = [];
  switch (bench) {
    case 'holds':
      all.push(
        perRequestOf('hold', 'hold API, 2 seats, direct to the cell', r.http.cpu, r.http.holdsPerSecond),
        perRequestOf('hold.pgbench', 'pgbench, the hold SQL', r.pgbench.cpu, r.pgbench.holdsPerSecond, 'pgbench'),
      );
      break;
    case 'relay':
      all.push(
        perRequestOf('relay.event', 'outbox → Kafka, per event', r.relay.cpu, r.relay.eventsPerSecond, 'relay'),
        perRequestOf(
          'relay.producer-performance',
          "Kafka's ProducerPerformance, per record",
          r.producerPerformance.cpu,
          r.producerPerformance.recordsPerSecond,
        ),
      );
      break;
    case 'router':
      all.push(
        perRequestOf('forward.direct', 'hold, direct to the cell', r.results.direct.cpu, r.results.direct.reqPerSecond),
        perRequestOf('forward.router', 'hold through the router', r.results.router.cpu, r.results.router.reqPerSecond),
        perRequestOf('forward.nginx', 'hold through nginx', r.results.nginx.cpu, r.results.nginx.reqPerSecond),
        perRequestOf(
          'forward.floor',
          'hold through a minimal Node proxy',
          r.results.floor.cpu,
          r.results.floor.reqPerSecond,
        ),
      );
      break;
    case 'proxy-cost':
      for (const [phase, figures] of [
        ['saturation', r.saturation],
        ['fixed-rate', r.fixedRate],
      ] as const)
        for (const [front, f] of Object.entries(
          figures as Record<string, { requestsPerSecond: number; frontCpuMsPerRequest: number }>,
        ))
          if (front !== 'direct')
            all.push({
              key: `proxy.${phase}.${front}`,
              path: `${front}, ${phase}, nothing else on the path`,
              requestsPerSecond: f.requestsPerSecond,
              cpuMsByProcess: { [front]: f.frontCpuMsPerRequest },
              machineBusyCores: Number.NaN,
              machineCores: cpus().length,
              seconds: Number.NaN,
            });
      break;
    case 'waiting-room': {
      const http = r.httpOverSockets;
      all.push(
        perRequestOf('room.join', 'waiting room join, in process', r.joins.cpu, r.joins.perSec, 'waiting room verbs'),
        perRequestOf('room.poll', 'waiting room poll, in process', r.polls.cpu, r.polls.perSec, 'waiting room verbs'),
        perRequestOf('room.poll.http', 'waiting room poll over HTTP', http.polls.cpu, http.polls.perSec),
        perRequestOf('room.join.http', 'waiting room join over HTTP', http.joins.cpu, http.joins.perSec),
        perRequestOf('room.mixed.http', 'waiting room joins + polls over HTTP', http.mixed.cpu, http.mixed.perSec),
        perRequestOf('bare.http', 'bare Node HTTP server', http.bareNodeServer.cpu, http.bareNodeServer.perSec),
      );
      break;
    }
  }
  return all.filter((p): p is PerRequest => p !== undefined);
}

/**
 * The row of the run whose figure is the median, with every run's figure. The figure is the ratio where every run
 * has one, else the value: a ratio and a value are never ranked against each other (the router's added latency has
 * no ratio in a run where nginx's figure is not positive).
 */
export function medianRows(perRun: Row[][]): (Row & { runs: number[]; medianOfRun: number })[] {
  const first = perRun[0] ?? [];
  return first.map((_, i) => {
    const candidates = perRun.map((run, k) => ({ row: run[i]!, k }));
    const byRatio = candidates.every((c) => c.row.ratio !== undefined);
    const key = (row: Row) => (byRatio ? row.ratio! : row.value);
    const sorted = [...candidates].sort((a, b) => key(a.row) - key(b.row));
    const mid = sorted[Math.floor((sorted.length - 1) / 2)]!;
    return { ...mid.row, runs: candidates.map((c) => key(c.row)), medianOfRun: mid.k + 1 };
  });
}

async function runOne(name: BenchName, runtime: string, quick: boolean, logFile: string): Promise<Result> {
  const resultFile = `${logFile}.json`;
  const child = spawn(process.execPath, ['--import', 'tsx', resolve(repoRoot, BENCHES[name])], {
    cwd: repoRoot,
    env: { ...process.env, BENCH_RUNTIME: runtime, BENCH_RESULT_FILE: resultFile, ...(quick ? QUICK[name] : {}) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  current = child;
  let log = '';
  child.stderr.on('data', (chunk: Buffer) => {
    log += chunk;
    process.stderr.write(chunk);
  });
  const code = await new Promise<number | null>((r) => child.once('close', (c) => r(c)));
  current = undefined;
  writeFileSync(logFile, log);
  if (code !== 0) throw new Error(`bench:${name} exited with ${code} (log: ${logFile})`);
  return JSON.parse(readFileSync(resultFile, 'utf8'));
}

let current: ReturnType<typeof spawn> | undefined;

/**
 * `--from dir[,dir]`: a benchmark's raw result from an earlier run's log folders (bench-<time>/<name>-<run>.log.json)
 * instead of running it again: a run cut short, or benchmarks run at different times, reported as one. The report
 * says so in its `from`; each row's reference still comes from the same run as its figure.
 */
function earlierResult(dirs: string, name: BenchName, run: number): Result {
  for (const dir of dirs.split(',')) {
    const file = resolve(repoRoot, dir, `${name}-${run}.log.json`);
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8'));
  }
  throw new Error(`--from: no ${name}-${run}.log.json in ${dirs}`);
}

/** A benchmark's CPU per request from the run its first row took as the median, so its figures share one run. */
function medianPerRequest(name: BenchName, runs: Result[], median: { medianOfRun: number }[]): PerRequest[] {
  const run = runs[(median[0]?.medianOfRun ?? 1) - 1];
  return run ? perRequest(name, run) : [];
}

function markdown(report: {
  date: string;
  runs: number;
  runtime: string;
  quick: boolean;
  machine: object;
  commit: string;
  rows: (Row & { runs: number[]; medianOfRun: number })[];
  perRequest: PerRequest[];
  failures: string[];
}): string {
  const fmt = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? '–' : String(n));
  const lines = [
    `# Benchmarks, ${report.date}`,
    '',
    `Median of ${report.runs} run${report.runs > 1 ? 's' : ''}; processes run from their ${report.runtime === 'bundle' ? 'bundles' : 'TypeScript sources under tsx'}; commit ${report.commit}; machine ${JSON.stringify(report.machine)}.${report.quick ? ' **--quick: a smoke test of the harness, not a measurement.**' : ''}`,
    '',
    'Each row is the run whose figure is the median; its reference was measured in that same run.',
    '',
    '| path | measure | value | reference (same run) | ratio | target | met | every run |',
    '|---|---|---|---|---|---|---|---|',
    ...report.rows.map(
      (r) =>
        `| ${r.path} | ${r.measure} | ${fmt(r.value)} ${r.unit} | ${r.reference ? `${r.reference.name}: ${fmt(r.reference.value)}` : '–'} | ${fmt(r.ratio)} | ${r.target} | ${r.met ? 'yes' : '**no**'} | ${r.runs.join(', ')} (median: run ${r.medianOfRun}) |`,
    ),
    '',
    ...cpuSection(report.rows),
    ...perRequestSection(report.perRequest),
    ...(report.failures.length > 0 ? ['**Failed:**', '', ...report.failures.map((f) => `- ${f}`), ''] : []),
  ];
  return lines.join('\n');
}

/** CPU milliseconds per request of each process on each path: what capacity/ sizes tasks from. */
function perRequestSection(paths: PerRequest[]): string[] {
  if (paths.length === 0) return [];
  return [
    '## CPU per request, by process (ms of one core; the capacity model reads these as `perRequest`)',
    '',
    '| key | path | requests/s | CPU ms per request by process | machine busy |',
    '|---|---|---|---|---|',
    ...paths.map(
      (p) =>
        `| ${p.key} | ${p.path} | ${p.requestsPerSecond} | ${Object.entries(p.cpuMsByProcess)
          .map(([who, ms]) => `${who} ${ms}`)
          .join(', ')} | ${p.machineBusyCores} of ${p.machineCores} |`,
    ),
    '',
  ];
}

/** For each row measured with a CPU reading: whether the machine's cores were all taken, and by whom. */
function cpuSection(rows: Row[]): string[] {
  const cores = (c?: CpuReading) =>
    c
      ? `${c.machineBusyCores} of ${c.machineCores} busy${c.stolenCores > 0.05 ? `, ${c.stolenCores} stolen` : ''}: ` +
        Object.entries(c.coresByProcess)
          .map(([who, n]) => `${who} ${n}`)
          .join(', ')
      : '–';
  const measured = rows.filter((r) => r.cpu?.measured);
  if (measured.length === 0) return [];
  return [
    '## Where the cores went (the median run)',
    '',
    '| path | while measured | while the reference ran |',
    '|---|---|---|',
    ...measured.map((r) => `| ${r.path} | ${cores(r.cpu?.measured)} | ${cores(r.cpu?.reference)} |`),
    '',
  ];
}

async function main() {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '1' },
      only: { type: 'string' },
      quick: { type: 'boolean', default: false },
      runtime: { type: 'string', default: 'bundle' },
      out: { type: 'string', default: 'load-tests/reports' },
      from: { type: 'string' },
    },
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer, not ${values.runs}`);
  if (values.runtime !== 'bundle' && values.runtime !== 'tsx') throw new Error('--runtime is bundle or tsx');
  const names = (values.only?.split(',') ?? Object.keys(BENCHES)) as BenchName[];
  for (const n of names) if (!(n in BENCHES)) throw new Error(`--only: no benchmark ${n} (${Object.keys(BENCHES)})`);

  // A benchmark interrupted here stops what it started itself (its own handlers); this passes the signal on
  // and starts no other benchmark.
  let interrupted: NodeJS.Signals | undefined;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = signal;
      current?.kill(signal);
    });
  }

  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const stamp = date.replaceAll(':', '-');
  const dir = resolve(repoRoot, values.out!);
  const logs = resolve(dir, `bench-${stamp}`);
  mkdirSync(logs, { recursive: true });
  const results: Record<string, Result[]> = {};
  const perBench: Record<string, Row[][]> = {};
  // A benchmark that fails is reported as failed; the others still run and are reported.
  const failures: string[] = [];
  for (let run = 1; run <= runs && !interrupted; run++) {
    for (const name of names) {
      if (interrupted) break;
      process.stderr.write(`[bench:all] ${name}, run ${run} of ${runs}\n`);
      try {
        const result = values.from
          ? earlierResult(values.from, name, run)
          : await runOne(name, values.runtime!, values.quick!, resolve(logs, `${name}-${run}.log`));
        results[name] = [...(results[name] ?? []), result];
        perBench[name] = [...(perBench[name] ?? []), rows(name, result)];
      } catch (err) {
        failures.push(`run ${run}: ${(err as Error).message}`);
      }
    }
  }
  const { execFileSync } = await import('node:child_process');
  const git = (args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  const commit = `${git(['rev-parse', '--short', 'HEAD'])}${git(['status', '--porcelain', '--untracked-files=no']) ? ' (with uncommitted changes)' : ''}`;
  const report = {
    date,
    runs,
    runtime: values.runtime!,
    quick: values.quick!,
    ...(values.from ? { from: values.from.split(',') } : {}),
    commit,
    machine: { cpus: cpus().length, model: cpus()[0]?.model, memoryGiB: Math.round(totalmem() / 2 ** 30) },
    rows: names.flatMap((n) => medianRows(perBench[n] ?? [])),
    perRequest: names.flatMap((n) => medianPerRequest(n, results[n] ?? [], medianRows(perBench[n] ?? []))),
    failures: interrupted ? [...failures, `interrupted by ${interrupted}`] : failures,
    results,
  };
  const base = resolve(dir, `bench-${stamp}`);
  writeFileSync(`${base}.json`, JSON.stringify(report, null, 2));
  writeFileSync(`${base}.md`, markdown(report));
  process.stdout.write(`${markdown(report)}\nreport: ${base}.json, ${base}.md (logs in ${logs}/)\n`);
  if (report.failures.length > 0) process.exitCode = interrupted === 'SIGINT' ? 130 : interrupted ? 143 : 1;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main().catch((err) => {
    console.error(`[bench:all] ${(err as Error).message}`);
    process.exit(1);
  });
}
