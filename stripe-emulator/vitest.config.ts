import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: {
    name: 'stripe-emulator',
    include: ['test/**/*.test.ts'],
    ...sideBySide,
  },
});
