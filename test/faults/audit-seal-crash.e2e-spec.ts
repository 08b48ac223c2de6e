import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';
import { postgresUrl } from '../support/databases';
import { asServerUser, DisposablePostgres } from '../support/disposable-postgres';
import { FreshStore, freshStore } from '../support/fresh-store';
import { ensureBuild, freePort, spawnServer, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';

jest.setTimeout(300_000);

const run = promisify(execFile);
const ROOT = join(__dirname, '..', '..');
const BOOTSTRAP_KEY = 'key_' + '6'.repeat(44);
/** A backlog the sealer needs several seconds for, written by this many transactions of this many records. */
const TRANSACTIONS = 300;
const PER_TRANSACTION = 200;
const TOTAL = TRANSACTIONS * PER_TRANSACTION;
const onPostgres = postgresUrl() !== null;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Query = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

/**
 * The vault's database, opened by the test while no vault runs (the embedded one belongs to one process) or
 * alongside it (PostgreSQL): a server of the test's own, its next transaction id set just below a page of
 * the commit log shy of ten million, so that the backlog crosses a power of ten as the embedded one crosses
 * a thousand (the sealer once sorted transaction ids as text there).
 */
interface Store {
  env: Record<string, string>;
  open<T>(work: (query: Query) => Promise<T>): Promise<T>;
  drop(): Promise<void>;
}

function pgResetwal(): string {
  const root = '/usr/lib/postgresql';
  const version = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_resetwal')))
    .sort((a, b) => Number(b) - Number(a))[0];
  return join(root, version, 'bin', 'pg_resetwal');
}

async function postgresStore(fresh: FreshStore): Promise<Store> {
  const server = await DisposablePostgres.start();
  await server.pause('fast');
  // A clog page boundary (32768 transactions a page): the server starts it afresh, with no file to create.
  await asServerUser(pgResetwal(), ['-x', String(305 * 32768), '-D', server.dataDir]);
  await server.resume();
  const admin = new Client({ connectionString: server.url });
  await admin.connect();
  await admin.query('CREATE DATABASE vault');
  await admin.end();
  const url = server.url.replace(/\/postgres$/, '/vault');
  return {
    env: { DATA_DIR: fresh.env.DATA_DIR, DATABASE_URL: url },
    async open(work) {
      const client = new Client({ connectionString: url });
      await client.connect();
      try {
        return await work(async (sql, params) => (await client.query(sql, params)).rows);
      } finally {
        await client.end();
      }
    },
    drop: async () => {
      await server.destroy();
      await fresh.drop();
    },
  };
}

function embeddedStore(fresh: FreshStore): Store {
  return {
    env: fresh.env,
    async open(work) {
      const db = await PGlite.create(join(fresh.env.DATA_DIR, 'db', 'pgdata'));
      try {
        return await work(async (sql, params) => (await db.query<Record<string, unknown>>(sql, params)).rows);
      } finally {
        await db.close();
      }
    },
    drop: () => fresh.drop(),
  };
}

async function counts(query: Query): Promise<{ records: number; links: number }> {
  const [row] = await query(
    'SELECT (SELECT count(*)::int FROM audit_records) AS records, (SELECT count(*)::int FROM audit_links) AS links',
  );
  return row as { records: number; links: number };
}

describe('a vault killed while it seals a large backlog', () => {
  let store: Store;
  let server: SpawnedServer | null = null;

  beforeAll(async () => {
    ensureBuild();
    const fresh = await freshStore({ migrated: !onPostgres });
    store = onPostgres ? await postgresStore(fresh) : embeddedStore(fresh);
  }, 240_000);
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await store?.drop();
  });

  async function start(): Promise<SpawnedServer> {
    server = spawnServer({
      ...store.env,
      PORT: String(await freePort()),
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      AUDIT_SEAL_INTERVAL_MS: '200',
    });
    await waitForOutput(server, 'Token Vault is running', 60_000);
    return server;
  }

  async function stop(signal: NodeJS.Signals): Promise<string> {
    const stopping = server as SpawnedServer;
    stopping.process.kill(signal);
    await stopping.exited;
    server = null;
    return stopping.output();
  }

  it('continues the chain after the restart, and audit:verify passes', async () => {
    await start();
    await stop('SIGTERM');
    await store.open(async (query) => {
      const [tenant] = await query('SELECT id FROM tenants LIMIT 1');
      if (onPostgres) {
        // Up to 150 transactions short of ten million: the backlog crosses it.
        await query(`DO $$ BEGIN
          WHILE pg_current_xact_id()::text::bigint < 9999850 LOOP COMMIT; END LOOP; END $$`);
      }
      for (let i = 0; i < TRANSACTIONS; i++) {
        await query(
          `INSERT INTO audit_records (tenant_id, id, created_at, actor_type, entity_type, operation, outcome, message)
           SELECT $1, gen_random_uuid(), now(), 'system', 'tenant', 'test', 'success', 'backlog ' || g
           FROM generate_series(1, ${PER_TRANSACTION}) g`,
          [tenant.id],
        );
      }
    });

    // Kill it once part of the backlog is chained: on PostgreSQL as soon as links appear; the embedded
    // database cannot be looked at while the vault runs, so after a while, and again if that missed.
    let atKill = { records: 0, links: 0 };
    for (let attempt = 0, wait = 2500; attempt < 4; attempt++) {
      await start();
      if (onPostgres) {
        for (let until = Date.now() + 60_000; Date.now() < until;) {
          if ((await store.open(counts)).links > 0) {
            break;
          }
          await sleep(20);
        }
      } else {
        await sleep(wait);
      }
      await stop('SIGKILL');
      atKill = await store.open(counts);
      if (atKill.links > 0 && atKill.links < atKill.records) {
        break;
      }
      wait = atKill.links === 0 ? wait * 2 : wait / 2;
    }
    expect(atKill.records).toBeGreaterThanOrEqual(TOTAL);
    expect(atKill.links).toBeGreaterThan(0);
    expect(atKill.links).toBeLessThan(atKill.records);

    // Restarted, it chains the rest on its own.
    await start();
    if (onPostgres) {
      for (let until = Date.now() + 120_000; Date.now() < until;) {
        const now = await store.open(counts);
        if (now.links === now.records) {
          break;
        }
        await sleep(200);
      }
    } else {
      await sleep(10_000);
    }
    // Before it is stopped: a seal in flight then is cut off with the database, and says so.
    expect(server?.output()).not.toContain('audit-seal failed');
    await stop('SIGTERM');

    const verify = await run(process.execPath, [join(ROOT, 'dist', 'src', 'cli.js'), 'audit:verify'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        ...store.env,
        VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
        LOG_LEVEL: 'silent',
      },
    });
    expect(verify.stdout).toMatch(/: ok\n/);
    expect(verify.stdout).toContain('audit chain(s) verified');
    const after = await store.open(counts);
    expect(after.links).toBe(after.records);
  });
});
