import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { type RunningProcess, startProcess } from './process';

export interface SupervisedStatus {
  name: string;
  pid: number | null;
  state: 'running' | 'restarting' | 'crash-looping' | 'stopped';
  restarts: number;
  startedAt: string;
  /** Where the process says whether it is doing its job (a worker's /readyz, an API's /readyz). */
  healthUrl?: string;
  lastExit?: { code: number | null; signal: string | null; at: string };
}

export interface RestartPolicy {
  /** The first restart waits this long; each crash in a row doubles it, up to `maxDelayMs`. */
  initialDelayMs: number;
  maxDelayMs: number;
  /** This many exits within `windowMs` is a crash loop: reported, not restarted again. */
  maxCrashes: number;
  windowMs: number;
}
export const defaultRestartPolicy: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 15_000,
  maxCrashes: 5,
  windowMs: 120_000,
};

export interface Supervised {
  name: string;
  status(): SupervisedStatus;
  stop(): Promise<void>;
}

/**
 * Keeps one long-running process role alive, as ECS keeps a service's tasks: an exit that
 * nobody asked for is reported in one line (name, exit code or signal, its last log lines) and
 * the process is started again after a backoff. A process that keeps crashing is reported and
 * left stopped, so a broken build does not restart forever.
 */
export async function supervise(
  entry: string,
  env: Record<string, string>,
  options: {
    name: string;
    logFile: string;
    readyUrl?: string;
    healthUrl?: string;
    command?: string[];
    policy?: RestartPolicy;
    report: (line: string) => void;
    onChange?: () => void;
  },
): Promise<Supervised> {
  const policy = options.policy ?? defaultRestartPolicy;
  let current: RunningProcess = await startProcess(entry, env, options);
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const crashes: number[] = [];
  const status: SupervisedStatus = {
    name: options.name,
    pid: current.child.pid ?? null,
    state: 'running',
    restarts: 0,
    startedAt: new Date().toISOString(),
    healthUrl: options.healthUrl,
  };

  const watch = (p: RunningProcess) => {
    p.child.once('exit', (code, signal) => {
      if (stopping || p !== current) return;
      const now = Date.now();
      crashes.push(now);
      while (crashes.length > 0 && crashes[0]! < now - policy.windowMs) crashes.shift();
      status.pid = null;
      status.lastExit = { code, signal, at: new Date(now).toISOString() };
      const tail = lastLines(options.logFile, 5);
      const how = signal ? `signal ${signal}` : `code ${code}`;
      if (crashes.length >= policy.maxCrashes) {
        status.state = 'crash-looping';
        options.report(
          `[supervisor] ${options.name} exited (${how}) ${crashes.length} times in ${policy.windowMs / 1000}s: not restarting it. Last lines:\n${tail}`,
        );
        options.onChange?.();
        return;
      }
      const delay = Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (crashes.length - 1));
      status.state = 'restarting';
      options.report(
        `[supervisor] ${options.name} exited (${how}); restart #${status.restarts + 1} in ${delay} ms. Last lines:\n${tail}`,
      );
      options.onChange?.();
      timer = setTimeout(() => void restart(), delay);
    });
  };

  const restart = async () => {
    if (stopping) return;
    try {
      current = await startProcess(entry, env, { ...options, readyUrl: undefined });
    } catch (err) {
      options.report(`[supervisor] ${options.name} could not be started again: ${String(err)}`);
      return;
    }
    status.restarts += 1;
    status.pid = current.child.pid ?? null;
    status.state = 'running';
    status.startedAt = new Date().toISOString();
    watch(current);
    options.onChange?.();
  };

  watch(current);
  return {
    name: options.name,
    status: () => ({ ...status }),
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await current.stop();
      status.state = 'stopped';
      status.pid = null;
    },
  };
}

/** The last `n` lines of a log that may be large: only its last 16 KiB are read. */
function lastLines(file: string, n: number): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, 16_384));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    return buf
      .toString('utf8')
      .trimEnd()
      .split('\n')
      .slice(-n)
      .map((l) => `    ${l.slice(0, 300)}`)
      .join('\n');
  } catch {
    return '    (no log)';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
