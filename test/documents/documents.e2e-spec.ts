import { randomBytes } from 'node:crypto';
import type { Server } from 'node:http';
import { DocumentsService } from '../../src/documents/documents.service';
import { DocumentsRepository } from '../../src/documents/documents.repository';
import { TestContext, TestTenant } from '../support/test-app';
import { rule } from '../support/token-factory';
import { documentsApi, MULTIPART_TAIL, multipartHead, rawUpload, storedRows } from './documents-api';

const ALL = ['documents:create', 'documents:read', 'documents:delete'] as const;
const LIMIT = 600_000;

/** Issue 41 item 4: /documents over HTTP, on a real database. */
describe('documents', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof documentsApi>;
  let appId: string;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { DOCUMENT_MAX_BYTES: String(LIMIT) } });
    tenant = await ctx.newTenant('Docs');
    const app = await ctx.newApplication(tenant, 'private', [...ALL]);
    appId = app.id;
    api = documentsApi(ctx, app.key);
  });
  afterAll(() => ctx.close());

  it('uploads with metadata, gets, downloads the exact bytes with their content type, and deletes', async () => {
    const data = randomBytes(LIMIT);
    const up = await api.upload(data, JSON.stringify({ metadata: { name: 'scan', kind: 'passport' } }));
    expect(up.status).toBe(201);
    expect(up.body).toEqual({
      id: expect.any(String),
      tenant_id: tenant.tenantId,
      metadata: { name: 'scan', kind: 'passport' },
      content_type: 'application/pdf',
      created_by: appId,
      created_at: expect.any(String),
    });
    const id = up.body.id as string;
    expect((await api.get(id).expect(200)).body).toEqual(up.body);
    const down = await api.data(id).expect(200);
    expect(down.headers['content-type']).toBe('application/pdf');
    expect(down.headers['content-length']).toBe(String(LIMIT));
    expect(down.headers['content-disposition']).toBe(`attachment; filename="${id}"`);
    expect(Buffer.compare(down.body as Buffer, data)).toBe(0);
    // Stored encrypted: no run of the plaintext is in any chunk.
    const chunks = await ctx.dataSource.query<{ data: Buffer }[]>(
      'SELECT data FROM document_chunks WHERE document_id = $1',
      [id],
    );
    expect(chunks.length).toBe(3);
    for (const chunk of chunks) {
      expect(chunk.data.includes(data.subarray(1000, 1032))).toBe(false);
    }
    await api.delete(id).expect(204);
    await api.get(id).expect(404);
    await api.data(id).expect(404);
    await api.delete(id).expect(404);
    expect(await storedRows(ctx, tenant.tenantId)).toEqual({ documents: 0, chunks: 0 });
  });

  it('keeps an empty file and a text file without metadata', async () => {
    const empty = await api.upload(Buffer.alloc(0)).expect(201);
    expect(empty.body.metadata).toEqual({});
    expect((await api.data(empty.body.id as string).expect(200)).body).toEqual(Buffer.alloc(0));
    const text = await api.upload(Buffer.from('hello'), undefined, 'text/plain').expect(201);
    const down = await api.data(text.body.id as string).expect(200);
    expect(down.headers['content-type']).toMatch(/^text\/plain/);
    expect((down.body as Buffer).toString()).toBe('hello');
    await api.delete(empty.body.id as string).expect(204);
    await api.delete(text.body.id as string).expect(204);
  });

  describe('refuses, leaving nothing stored', () => {
    afterEach(async () => {
      expect(await storedRows(ctx, tenant.tenantId)).toEqual({ documents: 0, chunks: 0 });
    });

    it('a body without the document part', async () => {
      const res = await ctx.http
        .post('/documents')
        .set('BT-API-KEY', (await ctx.newApplication(tenant, 'private', [...ALL])).key)
        .field('request', '{}')
        .expect(400);
      expect(res.body.errors).toEqual({ document: [expect.stringContaining('is required')] });
    });

    it('BT-IDEMPOTENCY-KEY: refused, since a streamed upload keeps no answer a retry could get', async () => {
      const res = await api.upload(Buffer.from('x')).set('BT-IDEMPOTENCY-KEY', 'upload-1').expect(400);
      expect(Object.keys(res.body.errors as object)).toEqual(['BT-IDEMPOTENCY-KEY']);
    });

    it('a request part that is not JSON, not an object, or has unknown properties or values', async () => {
      const bad = async (request: string, path: string): Promise<void> => {
        const res = await api.upload(Buffer.from('x'), request).expect(400);
        expect(Object.keys(res.body.errors as object)).toEqual([path]);
        expect(JSON.stringify(res.body)).not.toContain('secret-value');
      };
      await bad('{"metadata": {"a": "secret-value"', 'request');
      await bad('[1]', 'request');
      await bad('{"metadata": {"a": "b"}, "containers": ["/x/"]}', 'request.containers');
      await bad('{"metadata": {"a": 1}}', 'request.metadata.a');
      await bad('{"metadata": "secret-value"}', 'request.metadata');
    });

    it('a JSON body, a body of no type, parts with other names and a second file', async () => {
      await ctx.http.post('/documents').set('BT-API-KEY', tenantAppKey()).send({ document: 'x' }).expect(415);
      await ctx.http.post('/documents').set('BT-API-KEY', tenantAppKey()).expect(415);
      await ctx.http
        .post('/documents')
        .set('BT-API-KEY', tenantAppKey())
        .attach('file', Buffer.from('x'), 'a.txt')
        .expect(400);
      await ctx.http
        .post('/documents')
        .set('BT-API-KEY', tenantAppKey())
        .field('document', 'not a file')
        .expect(400);
      await ctx.http
        .post('/documents')
        .set('BT-API-KEY', tenantAppKey())
        .attach('document', Buffer.from('x'), 'a.txt')
        .attach('document', Buffer.from('y'), 'b.txt')
        .expect(400);
      await ctx.http
        .post('/documents')
        .set('BT-API-KEY', tenantAppKey())
        .set('Content-Type', 'multipart/form-data')
        .send('no boundary')
        .expect(400);
    });

    it('a document over DOCUMENT_MAX_BYTES with 413 in the common error body', async () => {
      const res = await api.upload(randomBytes(LIMIT + 1)).expect(413);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({
        status: 413,
        detail: `The document is larger than the limit of ${LIMIT} bytes.`,
      });
    });

    it('a body far over the limit while it streams: the answer comes before most of it is sent', async () => {
      const server = ctx.vault.app.getHttpServer();
      await listening(server);
      const { req, response } = rawUpload(server, tenantAppKey());
      let sent = 0;
      let answered = false;
      void response.finally(() => (answered = true)).catch(() => undefined);
      req.on('error', () => undefined);
      req.write(multipartHead());
      const piece = Buffer.alloc(64 * 1024, 1);
      const total = 100 * 1024 * 1024;
      while (!answered && sent < total) {
        if (!req.write(piece)) {
          await Promise.race([new Promise((r) => req.once('drain', r)), response.catch(() => undefined)]);
        }
        sent += piece.length;
      }
      const answer = await response;
      expect(answer.status).toBe(413);
      // Sockets buffer a few MB on each side: far less than the whole is sent before the answer comes.
      expect(sent).toBeLessThan(total / 2);
      req.destroy();
    });

    it('a Content-Length over the limit before any of the body is read', async () => {
      const server = ctx.vault.app.getHttpServer();
      await listening(server);
      const { req, response } = rawUpload(server, tenantAppKey(), LIMIT * 10);
      req.on('error', () => undefined);
      req.write(multipartHead());
      expect((await response).status).toBe(413);
      req.destroy();
    });

    it('an upload cut off mid-way', async () => {
      const server = ctx.vault.app.getHttpServer();
      await listening(server);
      const { req, response } = rawUpload(server, tenantAppKey());
      response.catch(() => undefined);
      req.on('error', () => undefined);
      req.write(multipartHead());
      req.write(randomBytes(LIMIT / 2));
      await until(async () => (await storedRows(ctx, tenant.tenantId)).chunks > 0);
      req.destroy();
      await until(async () => (await storedRows(ctx, tenant.tenantId)).documents === 0);
    });

    it('and stops a complete multipart body that ends without its closing boundary', async () => {
      const server = ctx.vault.app.getHttpServer();
      await listening(server);
      const body = Buffer.concat([multipartHead(), Buffer.from('abc')]);
      const { req, response } = rawUpload(server, tenantAppKey(), body.length);
      req.end(body);
      expect((await response).status).toBe(400);
      void MULTIPART_TAIL;
    });
  });

  let spareKey: string | undefined;
  function tenantAppKey(): string {
    if (spareKey === undefined) {
      throw new Error('spare key not made');
    }
    return spareKey;
  }
  beforeAll(async () => {
    spareKey = (await ctx.newApplication(tenant, 'private', [...ALL])).key;
  });

  describe('access', () => {
    let id: string;
    beforeAll(async () => {
      id = (await api.upload(Buffer.from('private')).expect(201)).body.id as string;
    });

    it('another tenant sees no document of this one', async () => {
      const other = await ctx.newTenant('Other');
      const theirs = documentsApi(ctx, (await ctx.newApplication(other, 'private', [...ALL])).key);
      await theirs.get(id).expect(404);
      await theirs.data(id).expect(404);
      await theirs.delete(id).expect(404);
      await api.get(id).expect(200);
    });

    it('each route needs its permission', async () => {
      const readOnly = documentsApi(
        ctx,
        (await ctx.newApplication(tenant, 'private', ['documents:read'])).key,
      );
      await readOnly.upload(Buffer.from('x')).expect(403);
      await readOnly.delete(id).expect(403);
      await readOnly.data(id).expect(200);
      const writeOnly = documentsApi(
        ctx,
        (await ctx.newApplication(tenant, 'private', ['documents:create'])).key,
      );
      await writeOnly.get(id).expect(403);
      await writeOnly.data(id).expect(403);
      const tokens = documentsApi(ctx, (await ctx.newApplication(tenant, 'private', ['token:read'])).key);
      await tokens.get(id).expect(403);
      await api.get('not-a-uuid').expect(400);
    });

    it('access rules decide: a masking rule reads the description only, a rule elsewhere nothing', async () => {
      const masked = documentsApi(
        ctx,
        (await ctx.newApplication(tenant, 'private', [], [rule('/documents/', 'mask', ['documents:read'])]))
          .key,
      );
      await masked.get(id).expect(200);
      const refused = await masked.data(id).expect(403);
      expect(JSON.parse((refused.body as Buffer).toString()).detail).toContain('reveal');
      const elsewhere = documentsApi(
        ctx,
        (await ctx.newApplication(tenant, 'private', [], [rule('/pci/', 'reveal', [...ALL])])).key,
      );
      await elsewhere.get(id).expect(403);
      await elsewhere.upload(Buffer.from('x')).expect(403);
      const root = documentsApi(
        ctx,
        (await ctx.newApplication(tenant, 'private', [], [rule('/', 'reveal', ['documents:read'])])).key,
      );
      expect(((await root.data(id).expect(200)).body as Buffer).toString()).toBe('private');
    });

    it("the tenant's management key grants document access, and audit records name every action", async () => {
      const created = await ctx.http
        .post('/applications')
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'files', type: 'private', permissions: [...ALL] })
        .expect(201);
      const theirs = documentsApi(ctx, created.body.key as string);
      const doc = (await theirs.upload(Buffer.from('audited')).expect(201)).body.id as string;
      await theirs.get(doc).expect(200);
      await theirs.data(doc).expect(200);
      await theirs.delete(doc).expect(204);
      const rows = await ctx.dataSource.query<{ operation: string }[]>(
        `SELECT operation FROM audit_records WHERE tenant_id = $1 AND entity_type = 'document' AND entity_id = $2
          ORDER BY created_at`,
        [tenant.tenantId, doc],
      );
      expect(rows.map((r) => r.operation)).toEqual(['create', 'read', 'download', 'delete']);
    });
  });

  it('the scheduled purge deletes uploads a crash left unfinished, never one under way', async () => {
    const repo = ctx.get(DocumentsRepository);
    const started = new Date();
    const id = '00000000-0000-4000-8000-000000000041';
    await repo.insertUploading(tenant.tenantId, id, Buffer.from('sealed'), appId, started);
    await repo.insertChunk(tenant.tenantId, id, 0, Buffer.from('chunk'));
    const service = ctx.get(DocumentsService);
    expect(await service.purgeStaleUploads(new Date(started.getTime() + 1000))).toBe(0);
    const later = new Date(started.getTime() + 2 * ctx.config.server.requestTimeoutMs + 1000);
    expect(await service.purgeStaleUploads(later)).toBe(1);
    const left = await ctx.dataSource.query<{ n: number }[]>(
      `SELECT (SELECT count(*)::int FROM documents WHERE id = $1) + (SELECT count(*)::int FROM document_chunks WHERE document_id = $1) AS n`,
      [id],
    );
    expect(left[0].n).toBe(0);
  });
});

async function listening(server: Server): Promise<void> {
  if (!server.listening) {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  }
}

async function until(check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) {
      throw new Error('condition not met in time');
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}
