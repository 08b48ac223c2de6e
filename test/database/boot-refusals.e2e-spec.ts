import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DisposablePostgres } from '../support/disposable-postgres';
import { ensureBuild, exitWithin, freePort, spawnServer, SpawnedServer } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

const ROOT = join(__dirname, '..', '..');

/** The machine's own Node when it is older than the project's (Debian's is 20), else null. */
function olderNode(): string | null {
  const path = '/usr/bin/node';
  if (!existsSync(path)) {
    return null;
  }
  const version = execFileSync(path, ['--version']).toString().trim();
  return Number(/^v(\d+)/.exec(version)?.[1]) < 24 ? path : null;
}
const NODE = olderNode();
const withOlderNode = NODE === null ? it.skip : it;

/** Runs a built entry point with `node`, to its exit. */
function runWith(
  node: string,
  entry: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(node, [join(ROOT, 'dist', 'src', ...entry.slice(0, 1)), ...entry.slice(1)], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => resolve({ code, out }));
  });
}

describe('boot refuses what cannot work, in one line', () => {
  let pg: DisposablePostgres;
  let server: SpawnedServer | null = null;

  beforeAll(async () => {
    ensureBuild();
    pg = await DisposablePostgres.start();
  }, 180_000);

  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await pg?.destroy();
  });

  withOlderNode(
    'an older Node.js: the server and the CLI exit 1 naming both versions and `npm start`',
    async () => {
      for (const entry of [['main.js'], ['cli.js', 'migrate']]) {
        const { code, out } = await runWith(NODE ?? '', entry, {
          PORT: String(await freePort()),
          DATABASE_URL: pg.url,
          VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
        });
        expect(code).toBe(1);
        const lines = out.trim().split('\n');
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          /^Token Vault cannot start: it needs Node\.js 24 and this is Node\.js v\d+\.\d+\.\d+ \(\/usr\/bin\/node\)\. Run it with the project's Node: `npm start`/,
        );
      }
    },
    60_000,
  );

  it('a database that does not exist: exit 1 at once, one line saying how to create it, no stack', async () => {
    const name = `tv_missing_${randomBytes(6).toString('hex')}`;
    const url = `postgres://postgres@127.0.0.1:${pg.port}/${name}`;
    const began = Date.now();
    server = spawnServer({
      PORT: String(await freePort()),
      DATABASE_URL: url,
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
    });
    expect(await exitWithin(server, 20_000)).toEqual({ code: 1, signal: null });
    // Before: twenty retries 250 ms apart, each with a stack trace.
    expect(Date.now() - began).toBeLessThan(10_000);
    const lines = server.output().trim().split('\n');
    expect(lines).toEqual([
      `Configuration error: The database "${name}" named by DATABASE_URL does not exist on PostgreSQL at 127.0.0.1:${pg.port}: create it (createdb -h 127.0.0.1 -p ${pg.port} -U postgres ${name}, or CREATE DATABASE "${name}";) and start again.`,
    ]);

    const cli = await runWith(process.execPath, ['cli.js', 'migrate'], { DATABASE_URL: url });
    expect(cli.code).toBe(1);
    expect(cli.out.trim()).toBe(lines[0]);
  }, 60_000);
});
