import { defineProject } from 'vitest/config';
import { exclusiveFiles, platformsSideBySide } from '../vitest.groups';

export default defineProject({
  test: {
    name: 'e2e',
    include: ['e2e/**/*.test.ts', 'ops/**/*.test.ts'],
    exclude: exclusiveFiles.e2e,
    testTimeout: 240_000,
    hookTimeout: 240_000,
    ...platformsSideBySide,
  },
});
