import { execFile } from 'node:child_process';
import { chmodSync, chownSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, ClientConfig } from 'pg';
import { DisposablePostgres, serverUser } from '../support/disposable-postgres';
import {
  ensureBuild,
  exitWithin,
  freePort,
  spawnServer,
  SpawnedServer,
  waitForOutput,
} from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';
import { createTestCa, TestCa } from '../support/test-pki';

/**
 * DATABASE_SSL_MODE against a PostgreSQL server of its own with `ssl = on` and a certificate made here
 * (for the name db.test and 127.0.0.1), whose pg_hba.conf admits TCP clients over TLS only (hostssl).
 */

/** The server's key and certificate in its data folder, TLS on, and TCP clients admitted over TLS only. */
async function requireTls(pg: DisposablePostgres, ca: TestCa): Promise<void> {
  const { key, cert } = ca.issue(['db.test']);
  const keyFile = join(pg.dataDir, 'server.key');
  writeFileSync(join(pg.dataDir, 'server.crt'), cert);
  writeFileSync(keyFile, key, { mode: 0o600 });
  if (process.getuid?.() === 0) {
    const { uid, gid } = await serverUser();
    chownSync(keyFile, uid, gid);
    chownSync(join(pg.dataDir, 'server.crt'), uid, gid);
  }
  chmodSync(keyFile, 0o600);
  writeFileSync(join(pg.dataDir, 'pg_hba.conf'), 'local all all trust\nhostssl all all 127.0.0.1/32 trust\n');
  await admin(pg, { ssl: false }, async (client) => {
    await client.query(`ALTER SYSTEM SET ssl = on`);
    await client.query('SELECT pg_reload_conf()');
  });
}

/** A session on the `postgres` database over TLS (the certificate is the test's own). */
async function admin<T>(
  pg: DisposablePostgres,
  options: ClientConfig,
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  const client = new Client({ connectionString: pg.url, ssl: { rejectUnauthorized: false }, ...options });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

const ROOT = join(__dirname, '..', '..');

describe('PostgreSQL over TLS (DATABASE_SSL_MODE, DATABASE_SSL_CA_FILE)', () => {
  let pg: DisposablePostgres;
  let ca: TestCa;
  let otherCa: TestCa;
  let server: SpawnedServer | null = null;

  const vaultUrl = (host: string): string => `postgres://postgres@${host}:${pg.port}/vault`;
  const boot = async (env: Record<string, string>): Promise<SpawnedServer> => {
    server = spawnServer({ PORT: String(await freePort()), VAULT_MASTER_KEYS: TEST_MASTER_KEYS, ...env });
    return server;
  };
  /** Exit 1 with `line` as all the process said. */
  const refused = async (env: Record<string, string>, line: RegExp): Promise<string> => {
    const spawned = await boot(env);
    expect(await exitWithin(spawned)).toEqual({ code: 1, signal: null });
    const said = spawned.output().trim();
    expect(said.split('\n')).toHaveLength(1);
    expect(said).toMatch(line);
    return said;
  };

  beforeAll(async () => {
    ensureBuild();
    ca = createTestCa('Database CA');
    otherCa = createTestCa('Some other CA');
    pg = await DisposablePostgres.start();
    await requireTls(pg, ca);
    await admin(pg, {}, (client) => client.query('CREATE DATABASE vault'));
  }, 180_000);

  afterEach(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    server = null;
  });

  afterAll(async () => {
    await pg?.destroy();
    ca?.dispose();
    otherCa?.dispose();
  });

  it('require: boots, and every connection of the vault (the pool and the change listener) is encrypted', async () => {
    const spawned = await boot({ DATABASE_URL: vaultUrl('127.0.0.1'), DATABASE_SSL_MODE: 'require' });
    await waitForOutput(spawned, 'Token Vault is running', 90_000);
    const sessions = await admin(pg, {}, async (client) => {
      const result = await client.query(
        `SELECT a.query, s.ssl FROM pg_stat_activity a JOIN pg_stat_ssl s USING (pid)
          WHERE a.datname = 'vault' AND a.backend_type = 'client backend'`,
      );
      return result.rows as { query: string; ssl: boolean }[];
    });
    expect(sessions.some((s) => s.query.startsWith('LISTEN'))).toBe(true);
    expect(sessions.length).toBeGreaterThanOrEqual(2);
    expect(sessions.every((s) => s.ssl)).toBe(true);
  }, 120_000);

  it('verify-full: boots with the CA that signed the certificate and a host name it lists (127.0.0.1)', async () => {
    const spawned = await boot({
      DATABASE_URL: vaultUrl('127.0.0.1'),
      DATABASE_SSL_MODE: 'verify-full',
      DATABASE_SSL_CA_FILE: ca.file,
    });
    await waitForOutput(spawned, 'Token Vault is running', 90_000);
  }, 120_000);

  it('verify-full: refuses a certificate of another CA, in one line naming the CA file', async () => {
    const said = await refused(
      {
        DATABASE_URL: vaultUrl('127.0.0.1'),
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_CA_FILE: otherCa.file,
      },
      /verify-full: the certificate of PostgreSQL at 127\.0\.0\.1:\d+ is not signed by a CA in /,
    );
    expect(said).toContain(otherCa.file);
  });

  it("verify-full without a CA file: the system's CAs do not vouch for a private CA", async () => {
    await refused(
      { DATABASE_URL: vaultUrl('127.0.0.1'), DATABASE_SSL_MODE: 'verify-full' },
      /is not signed by a CA in the system's trusted CAs \(set DATABASE_SSL_CA_FILE/,
    );
  });

  it('verify-full: refuses a host name the certificate does not list (localhost), in one line', async () => {
    await refused(
      {
        DATABASE_URL: vaultUrl('localhost'),
        DATABASE_SSL_MODE: 'verify-full',
        DATABASE_SSL_CA_FILE: ca.file,
      },
      /verify-full: the certificate of PostgreSQL at localhost:\d+ is not for the host name "localhost"/,
    );
  });

  it('disable: a server that admits TLS clients only is refused in one line saying what to set', async () => {
    await refused(
      { DATABASE_URL: vaultUrl('127.0.0.1'), DATABASE_SSL_MODE: 'disable' },
      /accepts only encrypted connections \(pg_hba\.conf: hostssl\): set DATABASE_SSL_MODE=verify-full/,
    );
  });

  it('the CLI opens the database with the same settings', async () => {
    const cli = (caFile: string): Promise<{ code: number; out: string }> =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          [join(ROOT, 'dist', 'src', 'cli.js'), 'migrate'],
          {
            cwd: ROOT,
            env: {
              PATH: process.env.PATH ?? '',
              DATABASE_URL: vaultUrl('127.0.0.1'),
              DATABASE_SSL_MODE: 'verify-full',
              DATABASE_SSL_CA_FILE: caFile,
              VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
            },
          },
          (err, stdout, stderr) =>
            resolve({ code: err === null ? 0 : Number(err.code), out: stdout + stderr }),
        );
      });
    const trusted = await cli(ca.file);
    expect(trusted).toEqual({ code: 0, out: expect.stringMatching(/^PostgreSQL: /) as unknown });
    const untrusted = await cli(otherCa.file);
    expect(untrusted.code).toBe(1);
    expect(untrusted.out.trim()).toMatch(
      /^Configuration error: DATABASE_SSL_MODE=verify-full: the certificate of .* is not signed by a CA in /,
    );
  }, 60_000);
});
