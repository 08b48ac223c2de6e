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

/** new Date() outside the Clock (see the rule below). */
const NO_BARE_DATE = {
  selector: "NewExpression[callee.name='Date'][arguments.length=0]",
  message: 'Inject Clock (common/clock.ts) and call clock.now() instead of new Date().',
};

const SQL_TEXT = '/^\\s*(SELECT|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM|WITH [a-z_]+ AS|LOCK TABLE)\\b/';
const NOT_HERE =
  'SQL text lives in repositories (*.repository.ts) and src/database/; call a repository method.';
const DATA_ACCESS_OUTSIDE_REPOSITORIES = {
  typeorm: ['DataSource', 'EntityManager', 'Repository', 'QueryRunner', 'SelectQueryBuilder'],
  '@nestjs/typeorm': ['InjectRepository', 'InjectDataSource', 'InjectEntityManager'],
};

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
      'no-restricted-syntax': ['error', NO_BARE_DATE],
    },
  },
  {
    // One data layer (docs/architecture.md): services reach the database through repositories, which send
    // their statements through Database (src/database/database.service.ts). A repository's statement-building
    // parts sit beside it as *.statements.ts. The migration command runs TypeORM's migrations on a DataSource.
    files: ['src/**/*.ts'],
    ignores: [
      'src/database/**',
      'src/migrations/**',
      'src/cli/migrate.ts',
      'src/**/*.repository.ts',
      'src/**/*.statements.ts',
      'src/common/clock.ts',
      'src/reactor-formulas/official/**',
      '**/*.spec.ts',
    ],
    rules: {
      'no-restricted-syntax': [
        'error',
        NO_BARE_DATE,
        { selector: `Literal[value=${SQL_TEXT}]`, message: NOT_HERE },
        { selector: `TemplateElement[value.raw=${SQL_TEXT}]`, message: NOT_HERE },
      ],
      'no-restricted-imports': [
        'error',
        {
          paths: Object.entries(DATA_ACCESS_OUTSIDE_REPOSITORIES).map(([name, importNames]) => ({
            name,
            importNames,
            message: NOT_HERE,
          })),
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
