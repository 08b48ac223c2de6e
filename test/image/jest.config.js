/**
 * The image test (`npm run test:image`), apart from `npm test`: it needs root, buildah and an image built
 * by scripts/image-build.sh, and boots whole containers. .ci/run runs it after the two test passes.
 */
module.exports = {
  rootDir: '../..',
  roots: ['<rootDir>/test/image'],
  testMatch: ['**/*.image-spec.ts'],
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': ['@swc/jest'] },
  globalSetup: '<rootDir>/test/image/global-setup.ts',
  globalTeardown: '<rootDir>/test/image/global-teardown.ts',
  testTimeout: 120000,
  forceExit: true,
};
