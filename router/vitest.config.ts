import { defineProject } from 'vitest/config';

export default defineProject({
  test: { name: 'router', include: ['test/**/*.test.ts'], testTimeout: 60000, hookTimeout: 60000 },
});
