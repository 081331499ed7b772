import { configDefaults } from 'vitest/config';

/**
 * How the suite shares the backing services `scripts/services` starts, in three groups run one after the other.
 * Every test file works in databases, topics and a key prefix of its own, so:
 *  1. the packages' files run side by side, `ONSALE_TEST_WORKERS` at a time (3 by default);
 *  2. then the end-to-end files that start a whole platform (a score of processes) and leave the servers alone,
 *     two side by side (`ONSALE_E2E_WORKERS`; one when `ONSALE_TEST_WORKERS` is 1): one platform idles during
 *     its sale windows and outages, two keep two cores busy;
 *  3. then, one at a time with the machine to themselves, the files that stop, kill, freeze or restart a shared
 *     server (the drills), which would fail whatever ran beside them, and the writer-failover drill, whose replica
 *     rebuild once lost its stream beside another platform. The broker, restart, region-failover, observability and
 *     supervisor drills are not among them: they freeze, kill, restart and promote servers of their own
 *     (test/support/own-servers.ts), so they run in group 2.
 * In group 1 a worker runs its files one after another in one module graph (`isolate: false`): no file keeps its
 * state in modules, and evaluating the graph afresh for every file was a third of the packages' CPU (the cell's
 * project: 287 core-seconds isolated, 175 not). The platforms' files stay isolated: their imports are a small share
 * of what they cost, which is starting a score of processes and driving them.
 */
const count = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
};
const group = (groupOrder: number, workers: number, isolate = true) => ({
  sequence: { groupOrder },
  maxWorkers: workers,
  fileParallelism: workers > 1,
  isolate,
});

const testWorkers = count('ONSALE_TEST_WORKERS', 3);
export const sideBySide = group(0, testWorkers, false);
export const platformsSideBySide = group(1, count('ONSALE_E2E_WORKERS', Math.min(2, testWorkers)));
export const alone = group(2, 1);

/**
 * The files of group 3, by the project they would otherwise be in (each excluded from it): those that stop, kill,
 * freeze or restart a shared server, and those that measure CPU or hold a time budget, which files beside them skew.
 */
export const exclusiveFiles: Record<string, string[]> = {
  'control-plane': ['test/controller.test.ts'],
  'load-tests': ['test/cpu.test.ts'],
  test: ['e2e/data-layer-drills.test.ts', 'e2e/writer-failover.test.ts'],
};

/** A package project's exclude: vitest's defaults and its files that run in group 3. */
export const excludingAlone = (project: string) => [...configDefaults.exclude, ...(exclusiveFiles[project] ?? [])];
