import { arrivalTimes, type Stage } from '../scenarios/definition';

/** One request: when it started (ms from the run's start), how long it took, its status (0: no answer). */
export interface Sample {
  t: number;
  ms: number;
  status: number;
  op: string;
}

export type Send = (op: string, request: () => Promise<number>) => Promise<number>;

/**
 * An open-model load generator (as k6's arrival-rate executors): arrivals come on the stages' schedule
 * whatever the answers take; an arrival finding `maxInFlight` still unanswered is dropped and counted,
 * not queued, so a slow server shows as latency and drops instead of a quietly lower rate.
 */
export async function openLoop(
  stages: Stage[],
  maxInFlight: number,
  arrival: (i: number, send: Send) => Promise<void>,
): Promise<{ samples: Sample[]; offered: number; dropped: number; seconds: number }> {
  const times = arrivalTimes(stages);
  const samples: Sample[] = [];
  const start = performance.now();
  const send: Send = async (op, request) => {
    const t0 = performance.now();
    let status = 0;
    try {
      status = await request();
    } catch {}
    samples.push({ t: t0 - start, ms: performance.now() - t0, status, op });
    return status;
  };
  let inFlight = 0;
  let dropped = 0;
  const running = new Set<Promise<void>>();
  let i = 0;
  while (i < times.length) {
    const now = performance.now() - start;
    while (i < times.length && times[i]! <= now) {
      const n = i++;
      if (inFlight >= maxInFlight) {
        dropped++;
        continue;
      }
      inFlight++;
      const p = arrival(n, send)
        .catch(() => {})
        .finally(() => {
          inFlight--;
          running.delete(p);
        });
      running.add(p);
    }
    if (i < times.length) await new Promise((r) => setTimeout(r, Math.max(0, times[i]! - (performance.now() - start))));
  }
  await Promise.all(running);
  return { samples, offered: times.length, dropped, seconds: (performance.now() - start) / 1000 };
}
