import { setTimeout as sleep } from 'node:timers/promises';
import { ExitedBeforeReady, lastLinesOfFile, type RunningProcess, startProcess } from './process';

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
 * the process is started again after a backoff, whether it ended while starting or later. A
 * process that keeps crashing is reported and left stopped (or its start fails), so a broken
 * build does not restart forever.
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
  const crashes: number[] = [];
  /** Counts an exit nobody asked for: the wait before the next start, or null when the exits are a crash loop. */
  const crashed = (now: number): number | null => {
    crashes.push(now);
    while (crashes.length > 0 && crashes[0]! < now - policy.windowMs) crashes.shift();
    if (crashes.length >= policy.maxCrashes) return null;
    return Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (crashes.length - 1));
  };

  // A process that ends before it is ready is started again, as ECS replaces a task that fails its start: a start can
  // fail for a reason that passes (a platform's router once exited at its start in one CI run of many, its reason
  // unrecorded; the report now carries its last lines). One that keeps ending is a crash loop: the start fails.
  let failedStarts = 0;
  const startReady = async (): Promise<RunningProcess> => {
    for (;;) {
      try {
        return await startProcess(entry, env, options);
      } catch (err) {
        if (!(err instanceof ExitedBeforeReady)) throw err;
        const delay = crashed(Date.now());
        if (delay === null) throw err;
        failedStarts += 1;
        options.report(
          `[supervisor] ${options.name} exited (${how(err.code, err.signal)}) before it was ready; start #${failedStarts + 1} in ${delay} ms. Last lines:\n${err.lines}`,
        );
        await sleep(delay);
      }
    }
  };

  let current = await startReady();
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  const status: SupervisedStatus = {
    name: options.name,
    pid: current.child.pid ?? null,
    state: 'running',
    restarts: failedStarts,
    startedAt: new Date().toISOString(),
    healthUrl: options.healthUrl,
  };

  const watch = (p: RunningProcess) => {
    p.child.once('exit', async (code, signal) => {
      if (stopping || p !== current) return;
      const now = Date.now();
      const delay = crashed(now);
      status.pid = null;
      status.lastExit = { code, signal, at: new Date(now).toISOString() };
      status.state = delay === null ? 'crash-looping' : 'restarting';
      options.onChange?.();
      await p.settled;
      const tail = lastLinesOfFile(options.logFile, 5);
      options.report(
        delay === null
          ? `[supervisor] ${options.name} exited (${how(code, signal)}) ${crashes.length} times in ${policy.windowMs / 1000}s: not restarting it. Last lines:\n${tail}`
          : `[supervisor] ${options.name} exited (${how(code, signal)}); restart #${status.restarts + 1} in ${delay} ms. Last lines:\n${tail}`,
      );
      if (delay !== null && !stopping) timer = setTimeout(() => void restart(), delay);
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

const how = (code: number | null, signal: string | null) => (signal ? `signal ${signal}` : `code ${code}`);
