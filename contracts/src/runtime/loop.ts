import type { Logger } from './log';

export interface PollingLoop {
  /** Resolves once the loop has stopped. */
  done: Promise<void>;
  /** Stops after the pass under way, if any. */
  stop(): Promise<void>;
}

/**
 * The one way a worker polls (relay, expiry, reconciler, the control plane's ticks): a pass at
 * a time, never overlapping itself. A pass returns how long to wait before the next (0: more
 * work is waiting), or nothing for the usual interval. A failed pass is logged, not fatal, and
 * the wait doubles up to `maxBackoffMs` so a missing broker or database is not hammered.
 */
export function pollingLoop(opts: {
  name: string;
  log: Logger;
  intervalMs: number;
  maxBackoffMs?: number;
  // biome-ignore lint/suspicious/noConfusingVoidType: a pass written as an async function without a value returns Promise<void>
  pass: () => Promise<number | undefined | void>;
  /** Called after every pass that succeeded (readiness). */
  onSuccess?: () => void;
}): PollingLoop {
  let stopping = false;
  let wake: () => void = () => {};
  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const timer = setTimeout(r, ms);
      wake = () => {
        clearTimeout(timer);
        r();
      };
    });

  const done = (async () => {
    let backoff = opts.intervalMs;
    while (!stopping) {
      let wait: number;
      try {
        const next = await opts.pass();
        opts.onSuccess?.();
        backoff = opts.intervalMs;
        wait = typeof next === 'number' ? next : opts.intervalMs;
      } catch (err) {
        opts.log.warn(`${opts.name} failed`, { err });
        wait = backoff;
        backoff = Math.min(backoff * 2, opts.maxBackoffMs ?? 5_000);
      }
      if (wait > 0 && !stopping) await sleep(wait);
    }
  })();

  return {
    done,
    async stop() {
      stopping = true;
      wake();
      await done;
    },
  };
}
