import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { postgresUrl } from '../support/databases';
import { expectProblem } from '../support/problems';
import { ensureBuild, freePort, spawnServer, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';

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
    // Data routes name the migrations too (not a 500 from a missing table), before and after authentication.
    for (const [method, path, key] of [
      ['GET', '/applications/key', KEY],
      ['POST', '/tokens', KEY],
      ['GET', '/tokens', undefined],
    ] as const) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { 'Content-Type': 'application/json', ...(key === undefined ? {} : { 'BT-API-KEY': key }) },
        ...(method === 'POST' ? { body: JSON.stringify({ type: 'token', data: 'x' }) } : {}),
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('30');
      expect(((await res.json()) as { detail: string }).detail).toMatch(
        /^The database schema is not up to date: migrations \d+ pending \(npm run migration:run\)/,
      );
    }

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

describe('MIGRATIONS_RUN=false on a database lacking the last migration (both databases)', () => {
  let ctx: TestContext;
  afterAll(() => ctx.close());

  it('answers data routes 503 naming migrations with Retry-After until it is applied, then serves them', async () => {
    ctx = await TestContext.create();
    const tenant = await ctx.newTenant();
    // TypeORM answers a DELETE ... RETURNING with [rows, affected].
    const [[row]] = await ctx.dataSource.query<[{ id: number; timestamp: string; name: string }[], number]>(
      'DELETE FROM migrations WHERE id = (SELECT max(id) FROM migrations) RETURNING id, timestamp, name',
    );
    // A server started now, without applying migrations at boot (the operator runs them).
    Object.assign(ctx.database, { options: { ...ctx.database.options, migrationsRun: false } });
    await ctx.restart({ MIGRATIONS_RUN: 'false' });

    // The tables mostly exist: without the gate this older schema would answer, or fail with a 500.
    const res = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key);
    expectProblem(res, 503);
    expect(res.headers['retry-after']).toBe('30');
    expect(res.body.detail).toBe(
      'The database schema is not up to date: migrations 1 pending (npm run migration:run). Try again once an operator has applied them.',
    );
    await ctx.http.get('/health/live').expect(200);
    expectProblem(await ctx.http.get('/health/ready'), 503, ['migrations']);

    await ctx.dataSource.query('INSERT INTO migrations (id, timestamp, name) VALUES ($1, $2, $3)', [
      row.id,
      row.timestamp,
      row.name,
    ]);
    await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
  });
});
