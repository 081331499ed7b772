import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: {
    name: 'messaging',
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    ...sideBySide,
  },
});
