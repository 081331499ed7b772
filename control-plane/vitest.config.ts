import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'control-plane',
    include: ['test/**/*.test.ts'],
    testTimeout: 60000,
    hookTimeout: 60000,
    fileParallelism: false,
  },
});
