import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups';

/** The load scenarios' short form and the benchmark harness: each starts real processes, so generous timeouts. */
export default defineProject({
  test: {
    name: 'load-tests',
    include: ['test/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 300_000,
    ...sideBySide,
  },
});
