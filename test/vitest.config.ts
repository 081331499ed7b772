import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'e2e', include: ['e2e/**/*.test.ts', 'ops/**/*.test.ts'], testTimeout: 240_000, hookTimeout: 240_000 },
});
