import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, createWriteStream, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * The last `n` lines of a process's output, indented, for a report of why it ended. A line is cut at 2,000
 * characters: a JSON log line names its error near its end, and only a runaway line is longer.
 */
export function lastLines(text: string, n: number): string {
  return text
    .trimEnd()
    .split('\n')
    .slice(-n)
    .map((l) => `    ${l.slice(0, 2_000)}`)
    .join('\n');
}

/** The last `n` lines of a log that may be large: only its last 16 KiB are read. */
export function lastLinesOfFile(file: string, n: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 16_384));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    return lastLines(buf.toString('utf8'), n);
  } catch {
    return '    (no log)';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A process that ended before it answered its readiness URL: `lines` is the end of what it wrote. */
export class ExitedBeforeReady extends Error {
  constructor(
    readonly processName: string,
    readonly code: number | null,
    readonly signal: string | null,
    readonly lines: string,
  ) {
    super(`${processName} exited with ${signal ?? code} before it was ready. Last lines:\n${lines}`);
  }
}

export interface RunningProcess {
  name: string;
  child: ChildProcess;
  /** Everything the process wrote, when started with `capture` (tests read it for secrets and reasons). */
  output: string[];
  exited: Promise<number | null>;
  /**
   * Settles after the exit, once everything the process wrote is in its log or `output` (its last words, a stack
   * trace, come after the exit event); if a child it left behind holds its pipes open, 2 s after the exit.
   */
  settled: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts one process role (a TypeScript entry point run by tsx) as its own OS process, as
 * production runs it. Its output goes to `logFile`, is kept in `output` with `capture`, or is
 * dropped; with `readyUrl` it waits until that URL answers 2xx, failing if the process exits first.
 */
export async function startProcess(
  entry: string,
  env: Record<string, string>,
  options: {
    name?: string;
    readyUrl?: string;
    logFile?: string;
    capture?: boolean;
    timeoutMs?: number;
    /** Runs this program (a server of its own, such as Prometheus) instead of `entry` under tsx. */
    command?: string[];
    /**
     * Told of the process as soon as it is spawned, before it is ready: whoever stops what it started (a benchmark
     * on SIGTERM) then stops it too if that comes while this still waits for `readyUrl`.
     */
    spawned?: (p: RunningProcess) => void;
    /** How `stop()` asks it to end (nginx's graceful stop is SIGQUIT); SIGTERM unless said. */
    stopSignal?: NodeJS.Signals;
  } = {},
): Promise<RunningProcess> {
  const name = options.name ?? entry;
  const piped = Boolean(options.logFile || options.capture);
  const [file, ...args] = options.command ?? [process.execPath, '--import', 'tsx', resolve(repoRoot, entry)];
  const child = spawn(file!, args, {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', piped ? 'pipe' : 'ignore', piped ? 'pipe' : 'inherit'],
  });
  if (options.logFile) mkdirSync(dirname(options.logFile), { recursive: true });
  const log = options.logFile ? createWriteStream(options.logFile, { flags: 'a' }) : undefined;
  if (log) {
    // Two streams into one file: the file closes once both have ended, not when the first does.
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    child.once('close', () => log.end());
  }
  const output: string[] = [];
  if (options.capture) {
    child.stdout?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  }
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  // Everything it wrote is in `output` once its pipes close, and in its log once the log file has closed after them
  // (however long the file's writes wait for a thread). Pipes a child it left behind holds open are given up on.
  const pipesClosed = new Promise<boolean>((r) => child.once('close', () => r(true)));
  const heldOpen = exited.then(() => new Promise<boolean>((r) => setTimeout(() => r(false), 2_000).unref()));
  const settled = Promise.race([pipesClosed, heldOpen]).then((closed) =>
    closed && log && !log.closed ? new Promise<void>((r) => log.once('close', () => r())) : undefined,
  );
  const running: RunningProcess = {
    name,
    child,
    output,
    exited,
    settled,
    stop: () =>
      new Promise<void>((r) => {
        if (child.exitCode !== null || child.signalCode !== null) return r();
        child.once('exit', () => r());
        child.kill(options.stopSignal ?? 'SIGTERM');
      }),
  };
  options.spawned?.(running);
  if (options.readyUrl) {
    const deadline = Date.now() + (options.timeoutMs ?? 60_000);
    for (;;) {
      if (child.exitCode !== null || child.signalCode !== null) {
        await settled;
        const lines = options.logFile
          ? lastLinesOfFile(options.logFile, 10)
          : options.capture
            ? lastLines(output.join(''), 10)
            : '    (its output went to the console)';
        throw new ExitedBeforeReady(name, child.exitCode, child.signalCode, lines);
      }
      try {
        if ((await fetch(options.readyUrl)).ok) break;
      } catch {}
      if (Date.now() > deadline) {
        // Whoever called cannot stop a process it never got back: it is stopped here, not left running.
        child.kill('SIGKILL');
        throw new Error(`${name} did not become ready at ${options.readyUrl}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return running;
}
