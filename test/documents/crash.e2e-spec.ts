import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Client } from 'pg';
import { postgresUrl } from '../support/databases';
import { FreshStore, freshStore } from '../support/fresh-store';
import { bootVault, ensureBuild, SpawnedServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';
import { multipartHead, rawUpload } from './documents-api';

jest.setTimeout(300_000);

const BOOTSTRAP_KEY = 'key_' + '4'.repeat(44);
const onPostgres = postgresUrl() !== null;

/** The stored rows of documents and chunks (the embedded database is read while no vault runs). */
async function rows(store: FreshStore): Promise<{ documents: number; chunks: number }> {
  const sql = `SELECT (SELECT count(*)::int FROM documents) AS documents,
                      (SELECT count(*)::int FROM document_chunks) AS chunks`;
  if (onPostgres) {
    const client = new Client({ connectionString: store.env.DATABASE_URL });
    await client.connect();
    try {
      return (await client.query(sql)).rows[0] as { documents: number; chunks: number };
    } finally {
      await client.end();
    }
  }
  const db = await PGlite.create(join(store.env.DATA_DIR, 'db', 'pgdata'));
  try {
    return (await db.query<{ documents: number; chunks: number }>(sql)).rows[0];
  } finally {
    await db.close();
  }
}

describe('a vault killed (SIGKILL) in the middle of a document upload', () => {
  let store: FreshStore;
  let server: SpawnedServer | null = null;
  let base = '';

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
  }, 240_000);
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await store?.drop();
  });

  async function start(env: Record<string, string> = {}): Promise<SpawnedServer> {
    const booted = await bootVault({
      ...store.env,
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      ...env,
    });
    server = booted.server;
    base = booted.base;
    return server;
  }

  it('leaves a half-written upload that is never served, and the purge removes it', async () => {
    await start();
    const app = await fetch(`${base}/applications`, {
      method: 'POST',
      headers: { 'BT-API-KEY': BOOTSTRAP_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'files', type: 'private', permissions: ['documents:create'] }),
    });
    expect(app.status).toBe(201);
    const key = ((await app.json()) as { key: string }).key;
    const { req, response } = rawUpload({ port: Number(new URL(base).port) }, key);
    response.catch(() => undefined);
    req.on('error', () => undefined);
    req.write(multipartHead());
    // Written at the pace the vault reads and stores: past what socket buffers hold, so chunks are stored.
    for (let i = 0; i < 48; i++) {
      if (!req.write(randomBytes(256 * 1024))) {
        await new Promise((r) => req.once('drain', r));
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    (server as SpawnedServer).process.kill('SIGKILL');
    await (server as SpawnedServer).exited;
    req.destroy();
    const killed = await rows(store);
    expect(killed.documents).toBe(1);
    expect(killed.chunks).toBeGreaterThan(0);
    // Requests run at most 1 s now, so the purge (every second) takes uploads older than 2 s.
    await start({
      HTTP_REQUEST_TIMEOUT_MS: '1000',
      HTTP_HEADERS_TIMEOUT_MS: '1000',
      PURGE_CRON: '* * * * * *',
    });
    await waitForOutput(server as SpawnedServer, 'unfinished document uploads purged', 60_000);
    (server as SpawnedServer).process.kill('SIGTERM');
    await (server as SpawnedServer).exited;
    server = null;
    expect(await rows(store)).toEqual({ documents: 0, chunks: 0 });
  });
});
