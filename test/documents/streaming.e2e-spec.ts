import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { postgresUrl } from '../support/databases';
import { FreshStore, freshStore } from '../support/fresh-store';
import { bootVault, ensureBuild, SpawnedServer } from '../support/spawned-server';
import { TEST_MASTER_KEYS } from '../support/test-app';
import { MULTIPART_TAIL, multipartHead, rawUpload } from './documents-api';

jest.setTimeout(240_000);

const MB = 1024 * 1024;
const DOCUMENT_BYTES = 20 * MB;
const PIECE = MB / 4;
const BOOTSTRAP_KEY = 'key_' + '3'.repeat(44);

/**
 * A 20 MB document up and down through a vault process of its own, its live memory measured half-way
 * through each (the client waits there): a vault that buffered the body or the data would hold at least
 * the half already sent, 10 MB more than before it began.
 */
// On the embedded database the database runs in the vault's process too, and its own Buffers grow as it
// stores (about 30 MB for 20 MB stored, heap flat): measured where the database is a server of its own.
const describeOnServer = postgresUrl() === null ? describe.skip : describe;

describeOnServer('documents stream', () => {
  let store: FreshStore;
  let server: SpawnedServer;
  let port: number;
  let key: string;

  beforeAll(async () => {
    ensureBuild();
    store = await freshStore({ migrated: true });
    const booted = await bootVault({
      ...store.env,
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
      VAULT_BOOTSTRAP_API_KEY: BOOTSTRAP_KEY,
      NODE_OPTIONS: `--require ${join(__dirname, 'memory-hook.js')}`,
    });
    server = booted.server;
    port = Number(new URL(booted.base).port);
    const app = await fetch(`${booted.base}/applications`, {
      method: 'POST',
      headers: { 'BT-API-KEY': BOOTSTRAP_KEY, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        name: 'Streams',
        type: 'private',
        permissions: ['documents:create', 'documents:read'],
        rules: [
          {
            priority: 1,
            container: '/',
            transform: 'reveal',
            permissions: ['documents:create', 'documents:read'],
          },
        ],
      }),
    });
    expect(app.status).toBe(201);
    key = ((await app.json()) as { key: string }).key;
  }, 240_000);
  afterAll(async () => {
    server?.process.kill('SIGKILL');
    await server?.exited;
    await store?.drop();
  });

  /** The vault's live memory after a full collection (memory-hook.js). */
  async function live(): Promise<number> {
    const seen = server.output().length;
    server.process.kill('SIGUSR2');
    for (let i = 0; i < 200; i++) {
      const line = /live-memory (\d+)/.exec(server.output().slice(seen));
      if (line !== null) {
        return Number(line[1]);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error('the vault did not report its memory');
  }

  /** Uploads DOCUMENT_BYTES of pseudo-random data; `halfway` runs when half is written and drained. */
  async function upload(seed: number, halfway: () => Promise<void>): Promise<string> {
    const head = multipartHead();
    const { req, response } = rawUpload({ port }, key, head.length + DOCUMENT_BYTES + MULTIPART_TAIL.length);
    req.write(head);
    for (let at = 0; at < DOCUMENT_BYTES; at += PIECE) {
      if (at === DOCUMENT_BYTES / 2) {
        // Past the socket buffers: wait until the vault has read (and stored) what was written.
        await new Promise((r) => setTimeout(r, 1500));
        await halfway();
      }
      if (!req.write(piece(seed, at))) {
        await new Promise((r) => req.once('drain', r));
      }
    }
    req.end(MULTIPART_TAIL);
    const answer = await response;
    expect(answer.status).toBe(201);
    return (JSON.parse(answer.body) as { id: string }).id;
  }

  /** The SHA-256 of a document's data, read with a pause half-way in which `halfway` runs. */
  function download(id: string, halfway: () => Promise<void>): Promise<string> {
    return new Promise((resolve, reject) => {
      const hash = createHash('sha256');
      let received = 0;
      let paused = false;
      httpRequest(
        { host: '127.0.0.1', port, path: `/documents/${id}/data`, headers: { 'BT-API-KEY': key } },
        (res) => {
          expect(res.statusCode).toBe(200);
          res.on('data', (d: Buffer) => {
            hash.update(d);
            received += d.length;
            if (!paused && received >= DOCUMENT_BYTES / 2) {
              paused = true;
              res.pause();
              setTimeout(() => {
                halfway().then(
                  () => res.resume(),
                  (err: unknown) => reject(err instanceof Error ? err : new Error(String(err))),
                );
              }, 1500);
            }
          });
          res.on('end', () => resolve(hash.digest('hex')));
          res.on('error', reject);
        },
      )
        .on('error', reject)
        .end();
    });
  }

  it('holds far less than a 20 MB document while it is uploaded and downloaded', async () => {
    // A first round trip warms up what grows once (the database's buffers, compiled code).
    const first = await upload(1, () => Promise.resolve());
    await download(first, () => Promise.resolve());
    const before = await live();
    let uploadGrowth = 0;
    const id = await upload(2, async () => {
      uploadGrowth = (await live()) - before;
    });
    let downloadGrowth = 0;
    const digest = await download(id, async () => {
      downloadGrowth = (await live()) - before;
    });
    expect(digest).toBe(expected(2));
    expect(uploadGrowth).toBeLessThan(DOCUMENT_BYTES / 4);
    expect(downloadGrowth).toBeLessThan(DOCUMENT_BYTES / 4);
  });
});

/** Deterministic data: piece `at` of document `seed`. */
function piece(seed: number, at: number): Buffer {
  const out = Buffer.alloc(PIECE);
  for (let i = 0; i < PIECE; i += 32) {
    createHash('sha256')
      .update(`${seed}:${at + i}`)
      .digest()
      .copy(out, i);
  }
  return out;
}

function expected(seed: number): string {
  const hash = createHash('sha256');
  for (let at = 0; at < DOCUMENT_BYTES; at += PIECE) {
    hash.update(piece(seed, at));
  }
  return hash.digest('hex');
}
