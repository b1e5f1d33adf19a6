import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['**/*.test.ts'],
    // Tests of Dapr-only behaviour (test/dapr) run with `npm run test:dapr`, which `npm test` runs after this.
    exclude: ['node_modules/**', 'data/**', ...(process.env.GATEPOST_TEST_RUNTIME === 'dapr' ? [] : ['**/*.dapr.test.ts'])],
    // On Dapr a file's setup starts six processes (again, if a port was taken meanwhile), and a
    // kill-and-restart brings four back: more time before a test or hook counts as stuck.
    testTimeout: process.env.GATEPOST_TEST_RUNTIME === 'dapr' ? 180_000 : 60_000,
    hookTimeout: process.env.GATEPOST_TEST_RUNTIME === 'dapr' ? 180_000 : 60_000,
    // End-to-end files each start their own Gatepost and SMTP relay; two cores run two at a time.
    fileParallelism: true,
    maxWorkers: 2,
    reporters: ['default', './test/summary.reporter.ts'],
  },
});
