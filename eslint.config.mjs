// ESLint 9 flat config: typescript-eslint with type information for the TypeScript sources, plain
// recommended rules for the CommonJS tool scripts, formatting left to prettier. Run with --max-warnings 0.
import eslint from '@eslint/js';
import prettier from 'eslint-config-prettier/flat';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Node globals the tool scripts use (listed here rather than depending on the `globals` package). */
const NODE_SCRIPT_GLOBALS = {
  require: 'readonly',
  module: 'writable',
  exports: 'writable',
  __dirname: 'readonly',
  __filename: 'readonly',
  process: 'readonly',
  console: 'readonly',
  Buffer: 'readonly',
  URL: 'readonly',
  fetch: 'readonly',
  AbortController: 'readonly',
  AbortSignal: 'readonly',
  setTimeout: 'readonly',
  clearTimeout: 'readonly',
  setInterval: 'readonly',
  clearInterval: 'readonly',
  setImmediate: 'readonly',
};

const UNUSED_VARS = [
  'error',
  {
    args: 'after-used',
    argsIgnorePattern: '^_',
    varsIgnorePattern: '^_',
    caughtErrors: 'none',
    ignoreRestSiblings: true,
  },
];

export default defineConfig(
  {
    ignores: [
      'scripts/pkcs11js-types-stub.d.ts',
      'dist/',
      'node_modules/',
      'coverage/',
      'data/',
      'bench/results/',
      '*.js',
      '*.mjs',
      '*.cjs',
    ],
  },
  {
    linterOptions: { reportUnusedDisableDirectives: 'error' },
  },
  {
    files: ['**/*.ts'],
    extends: [eslint.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    files: ['bench/**/*.js', 'scripts/**/*.js'],
    extends: [eslint.configs.recommended],
    languageOptions: { ecmaVersion: 'latest', sourceType: 'commonjs', globals: NODE_SCRIPT_GLOBALS },
    rules: { 'no-unused-vars': UNUSED_VARS },
  },
  // Turns off the rules that only restate formatting; the rules below come after it on purpose
  // (it would otherwise switch `curly` off).
  prettier,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-unused-vars': UNUSED_VARS,
      '@typescript-eslint/consistent-type-assertions': ['error', { assertionStyle: 'as' }],
    },
  },
  {
    files: ['**/*.ts', 'bench/**/*.js', 'scripts/**/*.js'],
    rules: {
      eqeqeq: ['error', 'always'],
      curly: ['error', 'all'],
    },
  },
  {
    // The time comes from the injected Clock (common/clock.ts), so tests can move it. Official formulas are
    // reactor source text run in the sandbox, where the Clock does not exist.
    files: ['src/**/*.ts'],
    ignores: ['src/common/clock.ts', 'src/reactor-formulas/official/**', '**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "NewExpression[callee.name='Date'][arguments.length=0]",
          message: 'Inject Clock (common/clock.ts) and call clock.now() instead of new Date().',
        },
      ],
    },
  },
  {
    // Tests read supertest bodies (typed `any`) and pass jest mocks' methods around.
    files: ['test/**/*.ts', '**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/unbound-method': 'off',
    },
  },
);
