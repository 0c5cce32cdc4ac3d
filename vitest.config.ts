import { configDefaults, defineConfig } from 'vitest/config';

// Checks whose outcome cannot depend on the database: they run in the embedded-database pass only, so the second
// pass (DATABASE_URL set: PostgreSQL and Redis) spends its time on what the database changes.
const DATABASE_INDEPENDENT = [
  'test/foundation/layering.test.ts',
  'test/console/api-types.test.ts',
  'test/cli/version.test.ts',
  'test/platform/readme.test.ts',
];

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: process.env.DATABASE_URL ? [...configDefaults.exclude, ...DATABASE_INDEPENDENT] : configDefaults.exclude,
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // A run that finds no test is a failure, not a pass.
    passWithNoTests: false,
  },
});
