import { defineProject } from 'vitest/config';
import { excludingAlone, sideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: {
    name: 'cell',
    include: ['test/**/*.test.ts'],
    exclude: excludingAlone('cell'),
    testTimeout: 120_000,
    hookTimeout: 120_000,
    ...sideBySide,
  },
});
