/** Percentile of a sample (nearest rank); the sample is sorted in place. */
export function percentile(sample: number[], p: number): number {
  if (sample.length === 0) return Number.NaN;
  sample.sort((a, b) => a - b);
  return sample[Math.min(sample.length - 1, Math.max(0, Math.ceil((p / 100) * sample.length) - 1))]!;
}

export const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** Runs `task(i)` for i in [0, total) with at most `concurrency` in flight; returns each duration in ms. */
export async function runPool(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const durations: number[] = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const started = performance.now();
      await task(i);
      durations.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return durations;
}
