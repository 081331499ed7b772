import { defineProject } from 'vitest/config';

export default defineProject({ test: { name: 'cell', include: ['test/**/*.test.ts'] } });
