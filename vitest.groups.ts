import { configDefaults } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { startsPlatform } from './test/support/platform-slot.ts';

/**
 * How the suite shares the backing services `scripts/services` starts, in two groups run one after the other.
 * Every test file works in databases, topics and a key prefix of its own, so:
 *  1. every file runs side by side, `ONSALE_TEST_WORKERS` at a time (5 by default), but at most
 *     `ONSALE_E2E_WORKERS` (3; one when `ONSALE_TEST_WORKERS` is 1) of the end-to-end files that start a whole
 *     platform (a score of processes): each takes a slot first (test/support/platform-slot.ts). The workers beyond
 *     the platforms run the packages' files, which fill the CPU a platform leaves idle during its sale windows and
 *     outages: run one group after the other, the packages' files kept two cores 85-87% busy and the platforms'
 *     85-89%, together 99% (the whole suite, consecutive runs on one machine: 892 s in three groups, 853 and 866 s
 *     in two);
 *  2. then, one at a time with the machine to themselves, the files that measure CPU or hold a time budget, which
 *     files beside them skew. The data-layer drills are among them: they kill and freeze the shared stores, and they
 *     hold the healthy cell's hold p99 to twice its baseline, a comparison that platforms beside them decide (one run
 *     beside two: 44 ms before Redis was killed, 124 ms during, against a bound of 100). The other drills freeze,
 *     kill, restart and promote servers of their own (test/support/own-servers.ts), never the shared ones, and hold
 *     no latency to a baseline, so they run in group 1.
 * A worker runs a package's files one after another in one module graph (`isolate: false`): no file keeps its
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

const testWorkers = count('ONSALE_TEST_WORKERS', 5);
const platformSlots = Math.min(testWorkers, count('ONSALE_E2E_WORKERS', Math.min(3, testWorkers)));
export const sideBySide = group(0, testWorkers, false);
export const platformsSideBySide = {
  ...group(0, testWorkers),
  setupFiles: ['./support/platform-slot.setup.ts'],
  provide: { platformSlots },
};
export const alone = group(1, 1);

declare module 'vitest' {
  export interface ProvidedContext {
    platformSlots: number;
  }
}

/** The files of group 2, by the project they would otherwise be in (each excluded from it). */
export const exclusiveFiles: Record<string, string[]> = {
  'control-plane': ['test/controller.test.ts'],
  'load-tests': ['test/cpu.test.ts'],
  test: ['e2e/data-layer-drills.test.ts'],
};

/** A package project's exclude: vitest's defaults and its files that run in group 2. */
export const excludingAlone = (project: string) => [...configDefaults.exclude, ...(exclusiveFiles[project] ?? [])];

/**
 * The longest files, longest first (their durations in a run of the whole suite, 2026-12-06): each kind starts
 * them first, so the run does not end on one long file while the other workers idle. Vitest orders files by the
 * durations its cache keeps, which a fresh clone has not (it falls back to the larger file first); a file not named
 * here keeps vitest's order, after these.
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

/**
 * Group 1 is one queue that vitest's pool hands out in order as workers free up: the longest platforms' files, one
 * per slot, then the packages' files project by project (a worker keeps its module graph only while the next file
 * is of its project), with the other platforms' files spread evenly among them. A platform's file that comes up
 * while every slot is taken waits for one (test/support/platform-slot.setup.ts).
 */
export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]) {
    const rank = (spec: TestSpecification) => {
      const i = longestFirst.findIndex((file) => spec.moduleId.endsWith(`/${file}`));
      return i < 0 ? longestFirst.length : i;
    };
    // Array.prototype.sort is stable: files of one rank keep vitest's order.
    const sorted = (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
    const [first, last] = [0, 1].map((g) => sorted.filter((s) => s.project.config.sequence.groupOrder === g));
    const platforms = first!.filter((s) => startsPlatform(s.moduleId));
    const others = first!.filter((s) => !startsPlatform(s.moduleId));
    const projects = [...new Set(others.map((s) => s.project.name))];
    const packages = projects.flatMap((name) => others.filter((s) => s.project.name === name));
    const later = platforms.slice(platformSlots);
    const every = packages.length / (later.length + 1);
    const queue = platforms.slice(0, platformSlots);
    let placed = 0;
    for (const [i, spec] of packages.entries()) {
      queue.push(spec);
      while (placed < later.length && i + 1 >= every * (placed + 1)) queue.push(later[placed++]!);
    }
    return [...queue, ...later.slice(placed), ...last!];
  }
}
