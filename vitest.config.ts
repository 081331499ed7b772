import { defineConfig } from 'vitest/config';

/**
 * Integration tests share one PostgreSQL, one Kafka broker and one Redis, so files run one at
 * a time; each file still gets its own database and topics.
 */
export default defineConfig({
  test: {
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    projects: [
      'contracts',
      'messaging',
      'cell',
      'control-plane',
      'router',
      'stripe-emulator',
      'infra/cdktf',
      'test',
      'reporting',
      'load-tests',
    ],
  },
});
