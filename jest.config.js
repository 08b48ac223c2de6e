/**
 * Three tiers, each its own project: `unit` (specs beside the source, no database), `service` (services
 * called directly on a real database: test/**\/*.service-spec.ts) and `e2e` (the HTTP API on a real
 * database: test/**\/*.e2e-spec.ts). The last two get a fresh database per file.
 */
const transform = { '^.+\\.ts$': ['@swc/jest'] };
const onDatabase = {
  testEnvironment: 'node',
  transform,
  roots: ['<rootDir>/test'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
};

module.exports = {
  // A leaked handle must fail loudly in CI, not hang it until the time limit.
  forceExit: true,
  // e2e hooks boot an app and a database; the machine may be busy.
  testTimeout: 60000,
  // Two workers, even on two cores: much of an e2e file's time is spent waiting (timers, sockets, child
  // processes). A worker that has grown past 1 GB (a file's leftovers: PGlite heaps, isolates) is replaced
  // before its next file; in one long-lived process the later files ran several times slower.
  maxWorkers: 2,
  workerIdleMemoryLimit: '1GB',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/src'],
      testMatch: ['**/*.spec.ts'],
    },
    { displayName: 'service', ...onDatabase, testMatch: ['**/*.service-spec.ts'] },
    { displayName: 'e2e', ...onDatabase, testMatch: ['**/*.e2e-spec.ts'] },
  ],
};
