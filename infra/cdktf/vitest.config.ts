import { fileURLToPath } from 'node:url';
import { defineProject } from 'vitest/config';
import { sideBySide } from '../../vitest.groups.ts';

export default defineProject({
  // Resolve `include` from this directory whether run as a root project or with --config from the repo root.
  root: fileURLToPath(new URL('.', import.meta.url)),
  test: {
    name: 'infra',
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Synthesizing ten cells with their DR stacks takes a while on a two-core runner.
    testTimeout: 120_000,
    hookTimeout: 120_000,
    ...sideBySide,
  },
});
