import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups.ts';

export default defineProject({
  // Some of these tests start processes (serveInProcesses' groups), which take seconds on a loaded machine.
  test: { name: 'contracts', include: ['test/**/*.test.ts'], testTimeout: 60_000, ...sideBySide },
});
