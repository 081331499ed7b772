import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups';

export default defineProject({
  test: {
    name: 'control-plane',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
    hookTimeout: 60000,
    ...sideBySide,
  },
});
