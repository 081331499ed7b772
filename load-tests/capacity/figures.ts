/**
 * The measured figures the plan is built on, read from the last report `pnpm bench:all` wrote
 * (scripts/bench/all.ts → load-tests/reports/bench-<time>.json, its `perRequest` section): the CPU milliseconds each
 * process spends per request on each path, on this machine. Nothing here is typed in; a figure the report lacks
 * stops the plan with the benchmark that measures it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export const REPORTS_DIR = resolve(import.meta.dirname, '../reports');

/** CPU milliseconds of one core per request, by process. */
export interface MeasuredFigures {
  source: { file: string; date: string; commit: string; machine: unknown };
  /** A hold (2 seats) direct to the cell: the cell API and PostgreSQL. */
  hold: { cellApi: number; postgres: number };
  /** A request forwarded by the router (a hold; the router's work does not depend on the path's own). */
  routerForward: { router: number };
  /**
   * nginx forwarding the same hold in the same run: the reference the router is held against, shown beside it; absent
   * when nginx used less CPU than the meter resolves (0.01 of a core).
   */
  nginxForward?: { nginx: number };
  /** Waiting-room join and poll over HTTP: the control plane API and Redis. */
  join: { controlPlaneApi: number; redis: number };
  poll: { controlPlaneApi: number; redis: number };
  /** One event from the outbox to Kafka: the relay, the broker and PostgreSQL. */
  relayEvent: { relay: number; kafka: number; postgres: number };
  /** Redis memory per queued buyer. */
  redisBytesPerQueuedBuyer: number;
  /** The hold API's p99 at half its saturated rate, and that rate (holds/s on this machine). */
  holdP99AtHalfRate: { ms: number; perSecond: number };
}

// biome-ignore lint/suspicious/noExplicitAny: the report's JSON, checked figure by figure below
type Report = any;

export class MissingFigures extends Error {}

const BENCH_FOR: Record<string, string> = {
  hold: 'holds (load-tests/holds/bench.ts)',
  'forward.router': 'router (router/bench/router-vs-nginx.ts)',
  'forward.nginx': 'router (router/bench/router-vs-nginx.ts)',
  'room.join.http': 'waiting-room (control-plane/bench/waiting-room.ts)',
  'room.poll.http': 'waiting-room (control-plane/bench/waiting-room.ts)',
  'relay.event': 'relay (load-tests/relay/bench.ts)',
};

/** The newest full (not --quick) bench:all report in `dir`, or the file given. */
export function lastReportFile(dir = REPORTS_DIR): string {
  const none = (why: string) =>
    new MissingFigures(
      `${why}: the capacity plan is built on the CPU per request that \`pnpm bench:all\` measures on this machine ` +
        `(scripts/bench/all.ts writes load-tests/reports/bench-<time>.json). Run \`pnpm bench:all\` first, or pass --report <file>.`,
    );
  if (!existsSync(dir)) throw none(`no report directory ${dir}`);
  const candidates = readdirSync(dir)
    .filter((f) => /^bench-.*\.json$/.test(f))
    .sort()
    .reverse();
  for (const f of candidates) {
    const file = resolve(dir, f);
    const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
    if (!report.quick && Array.isArray(report.perRequest) && report.perRequest.length > 0) return file;
  }
  throw none(
    candidates.length > 0
      ? `no full bench:all report with CPU per request in ${dir} (--quick reports are smoke tests, not measurements)`
      : `no bench:all report in ${dir}`,
  );
}

export function readFigures(file: string): MeasuredFigures {
  const report = JSON.parse(readFileSync(file, 'utf8')) as Report;
  return figuresFrom(report, file);
}

/** The figures from a report's JSON; throws naming the benchmark to run for any that is missing. */
export function figuresFrom(report: Report, file: string): MeasuredFigures {
  if (report.quick) throw new MissingFigures(`${file} is a --quick report (a smoke test): run \`pnpm bench:all\``);
  const paths = new Map<string, Record<string, number>>(
    (report.perRequest ?? []).map((p: { key: string; cpuMsByProcess: Record<string, number> }) => [
      p.key,
      p.cpuMsByProcess,
    ]),
  );
  const cpu = (key: string, process: string): number => {
    const value = paths.get(key)?.[process];
    if (typeof value !== 'number' || !(value > 0))
      throw new MissingFigures(
        `${file} has no CPU per request for ${process} on path ${key}: run \`pnpm bench:all --only ${BENCH_FOR[key]?.split(' ')[0]}\` (benchmark ${BENCH_FOR[key]})`,
      );
    return value;
  };
  const row = (path: string) => {
    const found = (report.rows ?? []).find((r: { path: string }) => r.path === path);
    if (!found) throw new MissingFigures(`${file} has no row "${path}": run \`pnpm bench:all\``);
    return found as { value: number; measure: string };
  };
  const memory = row('Redis per queued buyer');
  const halfRate = row('hold API at half the max rate');
  return {
    source: { file, date: report.date, commit: report.commit, machine: report.machine },
    hold: { cellApi: cpu('hold', 'cell API'), postgres: cpu('hold', 'postgresql') },
    routerForward: { router: cpu('forward.router', 'router') },
    nginxForward: paths.get('forward.nginx')?.nginx ? { nginx: paths.get('forward.nginx')!.nginx! } : undefined,
    join: { controlPlaneApi: cpu('room.join.http', 'control plane API'), redis: cpu('room.join.http', 'redis') },
    poll: { controlPlaneApi: cpu('room.poll.http', 'control plane API'), redis: cpu('room.poll.http', 'redis') },
    relayEvent: {
      relay: cpu('relay.event', 'relay'),
      kafka: cpu('relay.event', 'kafka'),
      postgres: cpu('relay.event', 'postgresql'),
    },
    redisBytesPerQueuedBuyer: memory.value,
    holdP99AtHalfRate: { ms: halfRate.value, perSecond: Number(/at (\d+(?:\.\d+)?)\/s/.exec(halfRate.measure)?.[1]) },
  };
}
