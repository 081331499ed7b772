import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: {
    name: 'reporting',
    include: ['test/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    ...sideBySide,
  },
});
