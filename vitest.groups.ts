import { configDefaults } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { positiveIntegerFromEnv } from './test/support/env.ts';

/**
 * How the suite shares the backing services `scripts/services` starts, in three groups run one after the other.
 * Every test file works in databases, topics and a key prefix of its own, so:
 *  1. the packages' files run side by side, `ONSALE_TEST_WORKERS` at a time (4 by default: their files wait on
 *     brokers and timers more than they compute; the group took 212 s with 3, 195 s with 4 and 191 s with 5, and
 *     351 core-seconds with 4 against 344 with 3);
 *  2. then the end-to-end files that start a whole platform (a score of processes), three side by side
 *     (`ONSALE_E2E_WORKERS`; one when `ONSALE_TEST_WORKERS` is 1): one platform idles during its sale windows and
 *     outages; three kept two cores 95-100% busy;
 *  3. then, one at a time with the machine to themselves, the files that measure CPU or hold a time budget, which
 *     files beside them skew. The data-layer drills are among them: they kill and freeze the shared stores, and they
 *     hold the healthy cell's hold p99 to twice its baseline, a comparison that platforms beside them decide (one run
 *     beside two: 44 ms before Redis was killed, 124 ms during, against a bound of 100). The other drills freeze,
 *     kill, restart and promote servers of their own (test/support/own-servers.ts), never the shared ones, and hold
 *     no latency to a baseline, so they run in group 2.
 * In group 1 a worker runs its files one after another in one module graph (`isolate: false`): no file keeps its
 * state in modules, and evaluating the graph afresh for every file was a third of the packages' CPU (the cell's
 * project: 287 core-seconds isolated, 175 not). The platforms' files stay isolated: their imports are a small share
 * of what they cost, which is starting a score of processes and driving them.
 */
const group = (groupOrder: number, workers: number, isolate = true) => ({
  sequence: { groupOrder },
  maxWorkers: workers,
  fileParallelism: workers > 1,
  isolate,
});

const testWorkers = positiveIntegerFromEnv('ONSALE_TEST_WORKERS', 4);
export const sideBySide = group(0, testWorkers, false);
export const platformsSideBySide = group(1, positiveIntegerFromEnv('ONSALE_E2E_WORKERS', Math.min(3, testWorkers)));
export const alone = group(2, 1);

/** The files of group 3, by the project they would otherwise be in (each excluded from it). */
export const exclusiveFiles: Record<string, string[]> = {
  'control-plane': ['test/controller.test.ts'],
  'load-tests': ['test/cpu.test.ts'],
  test: ['e2e/data-layer-drills.test.ts'],
};

/** A package project's exclude: vitest's defaults and its files that run in group 3. */
export const excludingAlone = (project: string) => [...configDefaults.exclude, ...(exclusiveFiles[project] ?? [])];

/**
 * The longest files of groups 1 and 2, longest first (their durations in a run of the whole suite, 2026-12-06):
 * each group starts them first, so it does not end on one long file while its other workers idle. Vitest orders a
 * group by the durations its cache keeps, which a fresh clone has not (it falls back to the larger file first); a
 * file not named here keeps vitest's order, after these.
 */
const longestFirst = [
  'test/e2e/broker-faults.test.ts',
  'test/e2e/observability.test.ts',
  'test/e2e/region-failover.test.ts',
  'test/e2e/stripe-outage.test.ts',
  'test/e2e/buyer-pages.test.ts',
  'test/e2e/restart.test.ts',
  'test/e2e/evacuation-faults.test.ts',
  'test/e2e/writer-failover.test.ts',
  'test/e2e/reporting-audit.test.ts',
  'test/e2e/evacuation-cell.test.ts',
  'test/e2e/console.test.ts',
  'cell/test/backbone.outage.test.ts',
  'cell/test/backbone.faults.test.ts',
  'reporting/test/reporting.test.ts',
  'load-tests/test/scenarios.test.ts',
  'load-tests/test/attack.test.ts',
  'cell/test/notifications.test.ts',
  'cell/test/payments.crash.test.ts',
];

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const rank = (spec: TestSpecification) => {
      const i = longestFirst.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return i < 0 ? longestFirst.length : i;
    };
    const groupOf = (spec: TestSpecification) => spec.project.config.sequence.groupOrder;
    // Array.prototype.sort is stable: files of one rank keep vitest's order.
    return (await super.sort(files)).sort((a, b) => groupOf(a) - groupOf(b) || rank(a) - rank(b));
  }
}
