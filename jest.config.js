/** Two projects: fast unit tests beside the source, e2e suites under test/ on a fresh database per file. */
const transform = { '^.+\\.ts$': ['@swc/jest'] };

module.exports = {
  // A leaked handle must fail loudly in CI, not hang it until the time limit.
  forceExit: true,
  // e2e hooks boot an app and a database; the machine may be busy.
  testTimeout: 60000,
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/src'],
      testMatch: ['**/*.spec.ts'],
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      transform,
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};
