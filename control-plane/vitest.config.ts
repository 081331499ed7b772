import { defineProject } from 'vitest/config';
import { excludingAlone, sideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: {
    name: 'control-plane',
    include: ['test/**/*.test.ts'],
    exclude: excludingAlone('control-plane'),
    testTimeout: 60000,
    hookTimeout: 60000,
    ...sideBySide,
  },
});
