import { ESLint } from 'eslint';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const NOT_HERE = /SQL text lives in repositories/;

const SQL_TEXT = [
  "export const find = 'SELECT id FROM tokens WHERE tenant_id = $1';",
  'export const remove = (table: string): string => `DELETE FROM ${table} WHERE id = $1`;',
  "export const pick = 'WITH picked AS (SELECT 1) SELECT * FROM picked';",
].join('\n');
const DATA_SOURCE = "import { DataSource } from 'typeorm';\nexport type Source = DataSource;\n";
const INJECTED =
  "import { InjectRepository } from '@nestjs/typeorm';\nexport const inject = InjectRepository;\n";
const ORDINARY = [
  "import { Column, Entity, QueryFailedError } from 'typeorm';",
  "export const prompts = ['Select a token', 'Update the reactor', 'Delete from the list', 'selected'];",
  'export const parts = [Column, Entity, QueryFailedError];',
].join('\n');

const SERVICE = 'src/tokens/lint-fixture.service.ts';
const ALLOWED = [
  'src/tokens/lint-fixture.repository.ts',
  'src/tokens/lint-fixture.statements.ts',
  'src/database/lint-fixture.ts',
  'src/migrations/1700000000000-lint-fixture.ts',
];
const TEXTS = [
  { path: SERVICE, code: SQL_TEXT },
  { path: SERVICE, code: DATA_SOURCE },
  { path: SERVICE, code: INJECTED },
  { path: SERVICE, code: ORDINARY },
  ...ALLOWED.map((path) => ({ path, code: `${DATA_SOURCE}${SQL_TEXT}` })),
];

/**
 * Each text's messages from the data-access rule's two rules, with eslint.config.mjs as `npm run lint` uses
 * it; the type-checked rules would need the files on disk.
 */
async function lint(texts: { path: string; code: string }[]): Promise<string[][]> {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: join(ROOT, 'eslint.config.mjs'),
    overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
    ruleFilter: ({ ruleId }) => ruleId === 'no-restricted-syntax' || ruleId === 'no-restricted-imports',
  });
  const found: string[][] = [];
  for (const { path, code } of texts) {
    const [result] = await eslint.lintText(code, { filePath: join(ROOT, path) });
    found.push(result.messages.map((m) => `${m.ruleId ?? 'parser'}: ${m.message}`));
  }
  return found;
}

/**
 * The data-access rule of eslint.config.mjs, as `npm run lint` runs it: SQL text and TypeORM's data access
 * are refused outside the repositories, *.statements.ts, src/database/ and the migrations.
 */
describe('the data-access lint rule', () => {
  let found: string[][];

  beforeAll(async () => {
    found = await lint(TEXTS);
  });

  it('refuses SQL text in a service, in strings and templates alike', () => {
    expect(found[0]).toHaveLength(3);
    for (const message of found[0]) {
      expect(message).toMatch(/^no-restricted-syntax: /);
      expect(message).toMatch(NOT_HERE);
    }
  });

  it("refuses TypeORM's and Nest's data-access imports in a service", () => {
    for (const messages of [found[1], found[2]]) {
      expect(messages).toHaveLength(1);
      expect(messages[0]).toMatch(/^no-restricted-imports: /);
      expect(messages[0]).toMatch(NOT_HERE);
    }
  });

  it('allows ordinary strings and the rest of TypeORM in a service', () => {
    expect(found[3]).toEqual([]);
  });

  it.each(ALLOWED.map((path, i) => [path, i + 4] as const))('allows both in %s', (_path, i) => {
    expect(found[i]).toEqual([]);
  });
});
