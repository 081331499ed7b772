import { defineProject } from 'vitest/config';
import { excludingAlone, platformsSideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: {
    name: 'e2e',
    include: ['e2e/**/*.test.ts', 'ops/**/*.test.ts'],
    exclude: excludingAlone('test'),
    testTimeout: 240_000,
    hookTimeout: 240_000,
    ...platformsSideBySide,
  },
});
