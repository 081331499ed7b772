import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'stripe-emulator',
    include: ['test/**/*.test.ts'],
  },
});
