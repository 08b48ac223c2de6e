import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { postgresUrl } from '../support/databases';
import { openTestDatabase } from '../support/databases';
import { DisposablePostgres } from '../support/disposable-postgres';
import { ensureBuild, freePort } from '../support/spawned-server';
import { WALKTHROUGHS } from './shell-blocks';
import { blocksOf, killLeftovers, QUICK_START, run, scriptOf } from './walkthroughs';

const ROOT = join(__dirname, '../..');
const ON_POSTGRES = postgresUrl() !== null;

/** What each walk-through's output shows once it worked, beyond every command succeeding. */
const EXPECTED: Record<string, RegExp[]> = {
  'secret-files': [/"status":"ok"/],
  'create-database': [/"status":"ok"/],
  softhsm: [/"status":"ok"/],
  sealed: [/share 1 of 5: tvs2\./, /The vault is unsealed\./, /"status":"ok"/],
};

/** The walk-throughs with blocks to run on this database (`postgres` blocks only on PostgreSQL). */
const RUNNABLE = Object.entries(WALKTHROUGHS)
  .filter(([name, w]) => blocksOf(w.document, name, ON_POSTGRES).length > 0)
  .map(([name]) => name);

/** A scratch folder inside the project (git ignores it), as a reader runs the examples in the project's folder. */
function scratch(name: string): string {
  mkdirSync(join(ROOT, '.doc-examples'), { recursive: true });
  const dir = mkdtempSync(join(ROOT, '.doc-examples', `${name}-`));
  mkdirSync(join(dir, 'tmp'));
  return dir;
}

/** A walk-through's environment: its folder's data/ and tmp/, its own port. */
async function environment(dir: string): Promise<Record<string, string>> {
  const port = await freePort();
  return {
    // The reader's project folder holds data/; npm runs the server from the project's own folder.
    DATA_DIR: join(dir, 'data'),
    TMPDIR: join(dir, 'tmp'),
    HOST: '127.0.0.1',
    PORT: String(port),
    VAULT: `http://127.0.0.1:${port}`,
    DOCS_TEST_SERVER_LOG: join(dir, 'server.log'),
    DOCS_TEST_PIDS: join(dir, 'server.pids'),
    // Never the registry: a bin that is not found fails instead of being looked up and installed.
    npm_config_offline: 'true',
    npm_config_yes: 'false',
  };
}

async function runIn(
  name: string,
  dir: string,
  script: string,
  env: Record<string, string>,
): Promise<string> {
  const { code, output } = await run(script, dir, env);
  if (code !== 0) {
    killLeftovers(env.DOCS_TEST_PIDS);
    let log = '';
    try {
      log = readFileSync(env.DOCS_TEST_SERVER_LOG, 'utf8');
    } catch {
      // no server started
    }
    throw new Error(
      `the walk-through ${name} failed (exit ${code}):\n${output.slice(-4000)}\n` +
        `server output:\n${log.slice(-3000)}`,
    );
  }
  return output;
}

/**
 * The operator walk-throughs of the guides (fences `walkthrough=<name>`, see shell-blocks.ts), each run word
 * for word in a folder, data folder, port and database of its own, starting and stopping the vaults it
 * starts, as a reader does at a terminal.
 */
describe('the operator walk-throughs of the guides', () => {
  // On the embedded database, the Quick start's data folder is made once and copied for each walk-through that
  // starts there (a first boot there is the slowest step); on PostgreSQL each has a database of its own.
  let quickStart: string | null = null;
  beforeAll(async () => {
    ensureBuild();
    if (!ON_POSTGRES && RUNNABLE.some((name) => WALKTHROUGHS[name].start === 'quick-start')) {
      quickStart = scratch('quick-start');
      await runIn('Quick start', quickStart, scriptOf([], {}, [QUICK_START]), await environment(quickStart));
    }
  }, 240_000);
  afterAll(() => {
    if (quickStart !== null) {
      rmSync(quickStart, { recursive: true, force: true });
    }
  });

  it('names the expected output of every walk-through', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(Object.keys(WALKTHROUGHS).sort());
  });

  it.each(RUNNABLE)(
    '%s works as written',
    async (name) => {
      const walkthrough = WALKTHROUGHS[name];
      const dir = scratch(name);
      const env = await environment(dir);
      const settings: Record<string, string> = {};
      const cleanup: (() => Promise<void>)[] = [];
      try {
        if (walkthrough.start === 'own-database') {
          const server = await DisposablePostgres.start();
          cleanup.push(() => server.destroy());
          settings.DB_SERVER = server.url;
          settings.DATABASE_URL = `postgres://vault:secret@127.0.0.1:${server.port}/vault`;
        } else if (ON_POSTGRES) {
          const database = await openTestDatabase();
          cleanup.push(() => database.close());
          env.DATABASE_URL = (database.options as { url: string }).url;
        }
        if (name === 'secret-files') {
          settings.SECRETS = join(dir, 'secrets');
        }
        const blocks = blocksOf(walkthrough.document, name, ON_POSTGRES);
        const prologue: string[] = [];
        if (walkthrough.start === 'quick-start' && quickStart !== null) {
          cpSync(join(quickStart, 'data'), env.DATA_DIR, { recursive: true });
        } else if (walkthrough.start === 'quick-start') {
          prologue.push(QUICK_START);
        }
        const output = await runIn(name, dir, scriptOf(blocks, settings, prologue), env);
        for (const expected of EXPECTED[name]) {
          expect(output).toMatch(expected);
        }
      } finally {
        for (const step of cleanup) {
          await step();
        }
        rmSync(dir, { recursive: true, force: true });
      }
    },
    240_000,
  );
});
