import { defineConfig } from 'vitest/config';
import { alone, exclusiveFiles, LongestFirst } from './vitest.groups.ts';

/**
 * One project per package, and the drills apart; vitest.groups.ts says which files run side by side and which
 * alone. Each file gets its own databases and topics.
 */
export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    sequence: { sequencer: LongestFirst },
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
      // Group 3 (vitest.groups.ts): one project per package of its files, each file alone.
      ...Object.entries(exclusiveFiles).map(([root, include]) => ({
        test: { name: `${root}-alone`, root, include, testTimeout: 300_000, hookTimeout: 300_000, ...alone },
      })),
    ],
  },
});
