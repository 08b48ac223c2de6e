import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The documents whose shell examples test/docs/examples.e2e-spec.ts runs. */
export const DOCUMENTS = ['README.md', 'docs/guide.md', 'docs/operations.md'] as const;
export type Document = (typeof DOCUMENTS)[number];

export interface ShellBlock {
  /** Line of the opening fence, 1-based. */
  line: number;
  /** `sh` or `bash`. */
  language: string;
  /** What follows the language on the fence, trimmed: the attributes described at FENCE. */
  info: string;
  body: string;
}

/**
 * What may follow `sh` on a fence, space-separated:
 *
 * - `no-test`: not run; listed in UNTESTED with the reason.
 * - `walkthrough=<name>`: part of an operator walk-through (WALKTHROUGHS): its blocks run in order in a shell
 *   of their own, in a folder of their own with its own data folder and database, so the walk-through's vault
 *   does not disturb the one the document's other blocks use. Without it, a block runs in the document's
 *   shell against the vault the test starts.
 * - `server`: the block's last command (with its `\` continuation lines, no trailing comment) starts the vault
 *   and keeps running, as a reader leaves it in its terminal. The harness runs that command in the
 *   background, on the walk-through's port (PORT, and VAULT pointing there), and waits until it has
 *   finished starting: `/health/ready` answers ok or says the vault is sealed (it fails with the server's
 *   output if the server exits first). The vault is stopped (SIGTERM, waited
 *   for) when the next server block begins and when the walk-through ends. Walk-throughs only.
 * - `postgres`: runs only when the test runs on PostgreSQL (DATABASE_URL set); skipped on the embedded one.
 */
export interface Fence {
  noTest: boolean;
  walkthrough: string | null;
  server: boolean;
  postgres: boolean;
}

export function fenceOf(block: ShellBlock): Fence {
  const fence: Fence = { noTest: false, walkthrough: null, server: false, postgres: false };
  for (const word of block.info.split(/\s+/).filter((w) => w !== '')) {
    const walkthrough = /^walkthrough=([a-z0-9-]+)$/.exec(word);
    if (word === 'no-test') {
      fence.noTest = true;
    } else if (word === 'server') {
      fence.server = true;
    } else if (word === 'postgres') {
      fence.postgres = true;
    } else if (walkthrough !== null) {
      fence.walkthrough = walkthrough[1];
    } else {
      throw new Error(`line ${block.line}: unknown fence attribute "${word}"`);
    }
  }
  if (fence.noTest && block.info !== 'no-test') {
    throw new Error(`line ${block.line}: a no-test block takes no other attribute`);
  }
  if (fence.server && fence.walkthrough === null) {
    throw new Error(`line ${block.line}: a server block belongs to a walk-through`);
  }
  return fence;
}

/**
 * The operator walk-throughs, by the name their fences give. Each starts in an empty folder of its own (the
 * reader's project folder, as far as the walk-through can tell: `data/` there is its DATA_DIR):
 *
 * - `fresh`: nothing more; on PostgreSQL, DATABASE_URL names an empty database of its own.
 * - `quick-start`: as `fresh`, then the harness starts the vault once and stops it, as the README's Quick
 *   start leaves it (the development master key in data/master.key, the default tenant and its keys).
 * - `own-database`: no DATABASE_URL; the walk-through sets up its database server's role and database
 *   itself, on a PostgreSQL server the harness starts for it (DB_SERVER names its superuser), so the names
 *   it creates cannot meet another run's.
 */
export const WALKTHROUGHS: Record<
  string,
  { document: Document; start: 'fresh' | 'quick-start' | 'own-database' }
> = {
  'secret-files': { document: 'docs/operations.md', start: 'fresh' },
  'create-database': { document: 'docs/operations.md', start: 'own-database' },
  softhsm: { document: 'docs/operations.md', start: 'quick-start' },
  sealed: { document: 'docs/operations.md', start: 'quick-start' },
};

/** Fence languages that hold commands: each block of one of these is run, or listed below with a reason. */
const SHELL_LANGUAGES = new Set(['sh', 'bash', 'shell', 'console', 'zsh']);

export function readDocument(document: Document): string {
  return readFileSync(join(__dirname, '../..', document), 'utf8');
}

/** Every fenced block whose language is a shell's, in order. */
export function shellBlocks(markdown: string): ShellBlock[] {
  const blocks: ShellBlock[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]);
    if (open === null) {
      continue;
    }
    const end = lines.indexOf('```', i + 1);
    if (end < 0) {
      throw new Error(`unclosed fence at line ${i + 1}`);
    }
    if (SHELL_LANGUAGES.has(open[1])) {
      blocks.push({
        line: i + 1,
        language: open[1],
        info: open[2].trim(),
        body: lines.slice(i + 1, end).join('\n'),
      });
    }
    i = end;
  }
  return blocks;
}

/**
 * The shell blocks no test runs, each with the reason, found by the start of their first line. A block marked
 * `no-test` that is not listed here, or an entry that matches no block, fails the test: no example escapes
 * by accident.
 */
export const UNTESTED: Record<Document, { starts: string; reason: string }[]> = {
  'README.md': [
    {
      starts: 'npm install && npm start',
      reason: 'installs the dependencies and starts a server that keeps running',
    },
    { starts: 'npm test', reason: 'the whole test suite, this test included' },
  ],
  'docs/guide.md': [],
  'docs/operations.md': [
    {
      starts: 'export VAULT_MASTER_KEYS=$(cat data/master.key)',
      reason:
        'shows how a setting lists the development key; the SoftHSM2 and sealed walk-throughs run that line',
    },
    {
      starts: 'HOST=127.0.0.1 PORT=3000 PUBLIC_URL=https://vault.example.com',
      reason: 'starts a production server that keeps running, behind the reader’s TLS proxy',
    },
    {
      starts: '# At a terminal: each key holder types or pastes their share',
      reason: 'needs the key holders’ shares of a sealed deployment',
    },
    {
      starts: 'npx nest build',
      reason: 'rebuilds the dist/ folder the running tests use, then starts a server that keeps running',
    },
    { starts: 'npx token-vault help', reason: 'a reference list of every command, with placeholders' },
    {
      starts: '# The collector',
      reason: 'settings for starting the vault against the reader’s OpenTelemetry collector, not commands',
    },
    { starts: 'docker build -t token-vault .', reason: 'needs a container engine and a database host' },
    {
      starts: 'docker build --build-arg WITH_PKCS11=true -t token-vault-pkcs11 .',
      reason: 'needs a container engine',
    },
    {
      starts: 'DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm test',
      reason: 'the whole test suite, this test included',
    },
  ],
};
