import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { postgresUrl } from '../support/databases';
import { ensureBuild, freePort, spawnServer, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const KEY = 'key_' + '5'.repeat(44);

/** An empty PostgreSQL database of its own: the embedded database belongs to the one process using it. */
const describeOnPostgres = postgresUrl() === null ? describe.skip : describe;

describeOnPostgres('MIGRATIONS_RUN=false on a database without the schema', () => {
  const name = `tv_unmigrated_${process.pid}`;
  let url: string;
  let server: SpawnedServer | null = null;
  const admin = async (sql: string): Promise<void> => {
    const client = new Client({ connectionString: postgresUrl() ?? '' });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    ensureBuild();
    await admin(`DROP DATABASE IF EXISTS ${name}`);
    await admin(`CREATE DATABASE ${name}`);
    const parsed = new URL(postgresUrl() ?? '');
    parsed.pathname = `/${name}`;
    url = parsed.toString();
  }, 180_000);

  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  });

  it('serves, is not ready until the migrate command ran, then sets up and is ready, never failing to start', async () => {
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATABASE_URL: url,
      MIGRATIONS_RUN: 'false',
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: KEY,
    };
    server = spawnServer(env);
    await waitForOutput(server, "lacks this build's migrations");
    const base = `http://127.0.0.1:${port}`;
    expect((await fetch(`${base}/health/live`)).status).toBe(200);
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(503);
    const errors = ((await ready.json()) as { errors: Record<string, unknown> }).errors;
    expect(errors).toHaveProperty('migrations');
    // The bootstrap key does not work yet: a client waiting for readiness must not be let in before it does.
    expect(errors).toHaveProperty('setup');

    await run(process.execPath, [join(ROOT, 'dist', 'src', 'cli.js'), 'migrate'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', DATABASE_URL: url, VAULT_MASTER_KEYS: TEST_MASTER_KEYS },
    });
    await waitForOutput(server, 'Token Vault is running', 30_000);
    expect((await fetch(`${base}/health/ready`)).status).toBe(200);
    const me = await fetch(`${base}/applications/key`, { headers: { 'BT-API-KEY': KEY } });
    expect(me.status).toBe(200);
    expect(server.output()).not.toContain('failed to start');
  }, 90_000);

  it('stops at once on SIGTERM while it waits', async () => {
    await admin(`DROP DATABASE IF EXISTS ${name}_b`);
    await admin(`CREATE DATABASE ${name}_b`);
    const parsed = new URL(url);
    parsed.pathname = `/${name}_b`;
    const waiting = spawnServer({
      PORT: String(await freePort()),
      DATABASE_URL: parsed.toString(),
      MIGRATIONS_RUN: 'false',
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
    });
    try {
      await waitForOutput(waiting, "lacks this build's migrations");
      waiting.process.kill('SIGTERM');
      expect(await waiting.exited).toEqual({ code: 0, signal: null });
      expect(waiting.output()).toContain('SIGTERM received');
    } finally {
      waiting.process.kill('SIGKILL');
      await admin(`DROP DATABASE IF EXISTS ${name}_b WITH (FORCE)`);
    }
  }, 60_000);
});
