/**
 * How the suite shares the backing services `scripts/services` starts, in three groups run one after the other.
 * Every test file works in databases, topics and a key prefix of its own, so:
 *  1. the packages' files run side by side, `ONSALE_TEST_WORKERS` at a time (3 by default: they wait on
 *     PostgreSQL, Kafka and Redis more than they compute);
 *  2. then the end-to-end files that start a whole platform (a score of processes) and leave the servers alone,
 *     two at a time (`ONSALE_E2E_WORKERS`), as they wait on leases, timeouts and buyers more than on the CPU;
 *  3. then, one at a time with the machine to themselves, the files that stop, kill, freeze or restart a shared
 *     server (the drills), which would fail whatever ran beside them.
 */
const count = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer`);
  return n;
};
const group = (groupOrder: number, workers: number) => ({
  sequence: { groupOrder },
  maxWorkers: workers,
  fileParallelism: workers > 1,
});

export const sideBySide = group(0, count('ONSALE_TEST_WORKERS', 3));
export const platformsSideBySide = group(1, count('ONSALE_E2E_WORKERS', 2));
export const alone = group(2, 1);

/** The files that stop, kill, freeze or restart a shared server: group 3, each excluded from its own project's. */
export const exclusiveFiles = {
  cell: ['test/backbone.outage.test.ts'],
  e2e: [
    'e2e/broker-faults.test.ts',
    'e2e/data-layer-drills.test.ts',
    'e2e/observability.test.ts',
    'e2e/region-failover.test.ts',
    'e2e/restart.test.ts',
    'e2e/supervisor.test.ts',
    'e2e/writer-failover.test.ts',
  ],
};
