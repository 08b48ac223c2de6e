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
  /** What follows the language on the fence (`no-test`), trimmed. */
  info: string;
  body: string;
}

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
        'reads the data folder of a Quick start that the test does not have (the SoftHSM2 trial does the same)',
    },
    {
      starts: "sudo -u postgres psql -v ON_ERROR_STOP=1 <<'SQL'",
      reason: 'creates a role and a database as the superuser of the reader’s own server',
    },
    {
      starts: 'DATABASE_URL=postgres://vault:secret@db.internal:5432/vault',
      reason: 'starts a server that keeps running, on a database host the test does not have',
    },
    {
      starts: 'HOST=127.0.0.1 PORT=3000 PUBLIC_URL=https://vault.example.com',
      reason: 'starts a production server that keeps running, behind the reader’s TLS proxy',
    },
    {
      starts: 'mkdir -p /tmp/hsm/tokens && chmod 700 /tmp/hsm',
      reason:
        'changes the key provider of a Quick start’s data folder and starts a server that keeps running',
    },
    {
      starts: 'VAULT_MASTER_KEYS=key-1:... npm run cli -- keys:split',
      reason: 'needs the reader’s master keys and starts a sealed server that keeps running',
    },
    {
      starts: '# At a terminal: each key holder types or pastes their share',
      reason: 'needs the key holders’ shares of a sealed deployment',
    },
    {
      starts: 'umask 077',
      reason:
        'writes the reader’s secrets under /run/secrets and starts a production server that keeps running',
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
