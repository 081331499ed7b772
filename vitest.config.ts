import { defineConfig } from 'vitest/config';
import { alone, exclusiveFiles } from './vitest.groups';

/**
 * One project per package, and the drills apart; vitest.groups.ts says which files run side by side and which
 * alone. Each file gets its own databases and topics.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      'contracts',
      'messaging',
      'cell',
      'control-plane',
      'router',
      'stripe-emulator',
      'infra/cdktf',
      'test',
      'reporting',
      'load-tests',
      // The files that stop, kill, freeze or restart a shared server, one at a time after everything else.
      {
        test: {
          name: 'cell-alone',
          root: 'cell',
          include: exclusiveFiles.cell,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          ...alone,
        },
      },
      {
        test: {
          name: 'e2e-alone',
          root: 'test',
          include: exclusiveFiles.e2e,
          testTimeout: 240_000,
          hookTimeout: 240_000,
          ...alone,
        },
      },
    ],
  },
});
