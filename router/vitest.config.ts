import { defineProject } from 'vitest/config';
import { sideBySide } from '../vitest.groups.ts';

export default defineProject({
  test: { name: 'router', include: ['test/**/*.test.ts'], testTimeout: 60000, hookTimeout: 60000, ...sideBySide },
});
