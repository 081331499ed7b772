import { defineProject } from 'vitest/config';
import { excludingAlone, sideBySide } from '../vitest.groups.ts';

/** The load scenarios' short form and the benchmark harness: each starts real processes, so generous timeouts. */
export default defineProject({
  test: {
    name: 'load-tests',
    include: ['test/**/*.test.ts'],
    exclude: excludingAlone('load-tests'),
    testTimeout: 300_000,
    hookTimeout: 300_000,
    ...sideBySide,
  },
});
