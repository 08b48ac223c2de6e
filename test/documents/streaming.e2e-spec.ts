import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { postgresUrl } from '../support/databases';
import { TestContext } from '../support/test-app';
import { MULTIPART_TAIL, multipartHead, rawUpload } from './documents-api';

jest.setTimeout(240_000);

const MB = 1024 * 1024;
const DOCUMENT_BYTES = 20 * MB;
const PIECE = MB / 4;

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Live memory of this process (the vault runs in it): the heap and Buffers, after a full collection. */
function live(): number {
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/**
 * A 20 MB document up and down through the vault's HTTP server in this process, its memory measured half-way
 * through each (the client waits there): a vault that buffered the body or the data would hold at least
 * the half already sent, 10 MB more than before it began.
 */
// On the embedded database the database runs in this process too, and its own Buffers grow as it stores
// (about 30 MB for 20 MB stored, heap flat): measured where the database is a server of its own.
const describeOnServer = postgresUrl() === null ? describe.skip : describe;

describeOnServer('documents stream', () => {
  let ctx: TestContext;
  let port: number;
  let key: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    const server = ctx.vault.app.getHttpServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
    const tenant = await ctx.newTenant('Streams');
    key = (
      await ctx.newApplication(tenant, 'private', ['documents:create', 'documents:read', 'documents:delete'])
    ).key;
  });
  afterAll(() => ctx.close());

  /** Uploads DOCUMENT_BYTES of pseudo-random data; `halfway` runs when half is written and drained. */
  async function upload(seed: number, halfway: () => void): Promise<string> {
    const head = multipartHead();
    const { req, response } = rawUpload({ port }, key, head.length + DOCUMENT_BYTES + MULTIPART_TAIL.length);
    req.write(head);
    for (let at = 0; at < DOCUMENT_BYTES; at += PIECE) {
      if (at === DOCUMENT_BYTES / 2) {
        // Past the socket buffers: wait until the vault has read (and stored) what was written.
        await new Promise((r) => setTimeout(r, 1500));
        halfway();
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
  function download(id: string, halfway: () => void): Promise<string> {
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
                halfway();
                res.resume();
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
    const first = await upload(1, () => undefined);
    await download(first, () => undefined);
    const before = live();
    let uploadGrowth = 0;
    const id = await upload(2, () => (uploadGrowth = live() - before));
    let downloadGrowth = 0;
    const digest = await download(id, () => (downloadGrowth = live() - before));
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
