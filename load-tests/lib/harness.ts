/**
 * What every benchmark and load scenario shares: it stops everything it started (processes by their PID,
 * databases, servers) when it ends, fails or is interrupted; its references are installed by the
 * project's script before it needs them; its result goes to stdout and, for `pnpm bench:all`, to a file.
 */
import { execFileSync, spawn } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { bundleCommand, ensureBundles } from '../../scripts/bundle';
import type { RunningProcess } from '../../scripts/local-platform/process';
import { repoRoot } from '../../test/support/services';
import { type CpuReading, cpuMeter } from './cpu';

type Stop = () => unknown;

export interface Bench {
  /** Runs `stop` when the benchmark ends, however it ends; the last deferred runs first. */
  defer(stop: Stop): void;
  /** A process this benchmark started: named with its PID on stderr, stopped at the end, killed if it lingers. */
  started<P extends Pick<RunningProcess, 'name' | 'child' | 'stop'>>(p: P): P;
  /** Which build the platform's processes run from (`BENCH_RUNTIME=tsx` measures the TypeScript loader). */
  runtime: 'bundle' | 'tsx';
  /** The command that runs a platform entry point in this runtime (undefined: under tsx). */
  command(entry: string): string[] | undefined;
  /**
   * Runs a reference tool (pgbench, redis-benchmark, Kafka's tools) to its end and returns its output; it is
   * stopped with the benchmark when that is interrupted meanwhile (the event loop stays free for signals).
   */
  exec(name: string, file: string, args: string[], options?: { cwd?: string }): Promise<string>;
  /** Measures `phase` and the cores each process used meanwhile (cpu.ts): the reading goes beside its figures. */
  measured<T>(phase: () => Promise<T>): Promise<T & { cpu: CpuReading }>;
}

const say = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/**
 * Runs one benchmark: its result (what `main` returns) is printed as JSON and written to
 * `BENCH_RESULT_FILE` when set. A failure, SIGINT or SIGTERM stops what it started, then the
 * process exits non-zero.
 */
export async function runBench(name: string, main: (bench: Bench) => Promise<unknown>): Promise<never> {
  const stops: Stop[] = [];
  const pids = new Map<number, string>();
  let cleaning: Promise<void> | undefined;
  const cleanup = () => {
    cleaning ??= (async () => {
      for (const stop of stops.reverse()) {
        try {
          await Promise.race([stop(), new Promise((r) => setTimeout(r, 15_000).unref())]);
        } catch (err) {
          say(`cleanup step failed: ${(err as Error).message}`);
        }
      }
      // A process that ignored its SIGTERM (or whose stop timed out) is not left behind.
      for (const [pid, what] of pids) {
        try {
          process.kill(pid, 0);
          say(`${what} (pid ${pid}) still running after stop: SIGKILL`);
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    })();
    return cleaning;
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      say(`${signal}: stopping ${pids.size} processes and what else ${name} started`);
      void cleanup().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
  const runtime = process.env.BENCH_RUNTIME === 'tsx' ? 'tsx' : 'bundle';
  const bench: Bench = {
    runtime,
    command: (entry) => (runtime === 'bundle' ? bundleCommand(entry, repoRoot) : undefined),
    defer: (stop) => stops.push(stop),
    async measured(phase) {
      const meter = cpuMeter(() => pids);
      const result = await phase();
      return { ...result, cpu: meter.read() };
    },
    exec(name, file, args, options = {}) {
      const child = spawn(file, args, { cwd: options.cwd ?? repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk;
      });
      child.stderr.on('data', (chunk: Buffer) => {
        err += chunk;
      });
      const exited = new Promise<number | null>((resolve, reject) => {
        child.once('error', reject);
        child.once('close', (code) => resolve(code));
      });
      bench.started({
        name,
        child,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
      return exited.then((code) => {
        if (code !== 0) throw new Error(`${name} exited with ${code}: ${err.trim().split('\n').slice(-5).join(' | ')}`);
        return out;
      });
    },
    started(p) {
      const pid = p.child.pid;
      if (pid) {
        pids.set(pid, p.name);
        say(`started ${p.name} pid ${pid}`);
      }
      stops.push(async () => {
        await p.stop();
        if (pid) pids.delete(pid);
      });
      return p;
    },
  };
  let code = 0;
  try {
    if (runtime === 'bundle') await ensureBundles(repoRoot, say);
    const result = await main(bench);
    const json = JSON.stringify({ benchmark: name, runtime, ...(result as object) }, null, 2);
    console.log(json);
    if (process.env.BENCH_RESULT_FILE) writeFileSync(process.env.BENCH_RESULT_FILE, json);
  } catch (err) {
    say(`${name} failed: ${(err as Error).stack ?? err}`);
    code = 1;
  } finally {
    await cleanup();
  }
  // In-process servers and pools the benchmark no longer needs must not keep it alive.
  process.exit(code);
}

/** The path of `command` on PATH (and the sbin directories, where Debian puts nginx), or undefined. */
export function which(command: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/sbin'];
  for (const dir of dirs) {
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return undefined;
}

/**
 * The reference a benchmark compares against, installed by `scripts/platform install-references`
 * when it is missing (Debian packages; Kafka's tools come with the broker's jars from scripts/services).
 */
export function reference(command: string, find: () => string | undefined = () => which(command)): string {
  const found = find();
  if (found) return found;
  say(`${command} is missing: bash scripts/platform install-references`);
  execFileSync('bash', ['scripts/platform', 'install-references'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const installed = find();
  if (!installed) throw new Error(`${command} is still missing after scripts/platform install-references`);
  return installed;
}
