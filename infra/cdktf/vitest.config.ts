import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'infra',
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Synthesizing ten cells with their DR stacks takes a while on a two-core runner.
    testTimeout: 120_000,
    hookTimeout: 120_000,
  },
});
