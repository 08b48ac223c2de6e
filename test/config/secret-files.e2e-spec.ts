import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FreshStore, freshStore } from '../support/fresh-store';
import { ensureBuild, freePort, spawnServer, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
const BOOTSTRAP_KEY = 'key_' + '5'.repeat(44);
const METRICS_TOKEN = 'metrics-token-from-a-mounted-secret-file';

/** `node dist/src/cli.js ...` with only `env`: the migration Job of the Kubernetes manifests. */
function cli(env: Record<string, string>, args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(ROOT, 'dist', 'src', 'cli.js'), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, output })));
}

/**
 * A production start whose secrets are files, as the Kubernetes manifests mount them: the migration
 * command first, then the server with MIGRATIONS_RUN=false, on PostgreSQL (DATABASE_URL_FILE) when the run
 * has one, else on the embedded database.
 */
describe('secrets given as <NAME>_FILE', () => {
  let store: FreshStore;
  let server: SpawnedServer | null = null;
  /** The store's environment with every secret moved into a file under its DATA_DIR. */
  let env: Record<string, string>;

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore();
    const dir = store.env.DATA_DIR;
    const secret = (name: string, value: string): string => {
      const file = join(dir, name);
      writeFileSync(file, `${value}\n`, { mode: 0o600 });
      return file;
    };
    env = {
      DATA_DIR: dir,
      NODE_ENV: 'production',
      LOG_LEVEL: 'error',
      VAULT_MASTER_KEYS_FILE: secret('master-keys', TEST_MASTER_KEYS),
      VAULT_BOOTSTRAP_API_KEY_FILE: secret('bootstrap-api-key', BOOTSTRAP_KEY),
      METRICS_TOKEN_FILE: secret('metrics-token', METRICS_TOKEN),
    };
    if (store.env.DATABASE_URL !== undefined) {
      env.DATABASE_URL_FILE = secret('database-url', store.env.DATABASE_URL);
    }
  }, 240_000);
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await store.drop();
  });

  it('migrates with the CLI, then serves with every secret read from its file', async () => {
    const migrate = await cli(env, ['migrate']);
    expect(migrate.output).not.toContain(TEST_MASTER_KEYS.split(':')[1]);
    expect(migrate.code).toBe(0);

    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    server = spawnServer({ ...env, LOG_LEVEL: 'info', PORT: String(port), MIGRATIONS_RUN: 'false' });
    await waitForOutput(server, 'Token Vault is running');
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    const own = await fetch(`${base}/applications/key`, { headers: { 'BT-API-KEY': BOOTSTRAP_KEY } });
    expect(own.status).toBe(200);
    // Without the token /metrics is a path that does not exist; with the token from the file it answers.
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
    const metrics = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(server.output()).not.toContain(TEST_MASTER_KEYS.split(':')[1]);
    expect(server.output()).not.toContain(METRICS_TOKEN);

    server.process.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    server = null;
  });

  it('refuses to start, in one line without the value, when a setting is given both ways', async () => {
    const both = spawnServer({ ...env, PORT: String(await freePort()), VAULT_MASTER_KEYS: TEST_MASTER_KEYS });
    expect((await both.exited).code).toBe(1);
    expect(both.output().trim()).toBe(
      'Configuration error: VAULT_MASTER_KEYS and VAULT_MASTER_KEYS_FILE are both set: keep one',
    );
  });

  it('refuses a secret file that cannot be read, naming the setting', async () => {
    const missing = join(store.env.DATA_DIR, 'no-such-token');
    const run = await cli({ ...env, METRICS_TOKEN_FILE: missing }, ['migrate']);
    expect(run.code).toBe(1);
    expect(run.output.trim()).toBe(
      `Configuration error: METRICS_TOKEN_FILE: cannot read ${missing} (ENOENT)`,
    );
  });
});
