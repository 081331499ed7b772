import { defineProject } from 'vitest/config';
import { exclusiveFiles, sideBySide } from '../vitest.groups';

export default defineProject({
  test: {
    name: 'cell',
    include: ['test/**/*.test.ts'],
    exclude: exclusiveFiles.cell,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    ...sideBySide,
  },
});
