import { randomBytes } from 'node:crypto';
import { DocumentsRepository } from '../../src/documents/documents.repository';
import { TestContext, TestTenant } from '../support/test-app';
import { expectProblem } from '../support/problems';
import { documentsApi, storedRows } from './documents-api';

const ALL = ['documents:create', 'documents:read', 'documents:delete'] as const;

/** /documents against what the vault never does: echo or log a document's bytes, 500 on bad ids. */
describe('documents: bad input and sensitive bytes', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof documentsApi>;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Docs');
    api = documentsApi(ctx, (await ctx.newApplication(tenant, 'private', [...ALL])).key);
  });
  afterAll(() => ctx.close());

  /** Bytes no log line or error body may hold: unique, and text, so a log of them would show. */
  const secret = () => `passport-${randomBytes(12).toString('hex')}`;
  const body = (res: { body: unknown; text?: string }) =>
    Buffer.isBuffer(res.body) ? res.body.toString() : (res.text ?? JSON.stringify(res.body));

  it.each(['not-a-uuid', '4242424242424242', '00000000-0000-0000-0000-00000000000g', 'x'.repeat(300)])(
    'an id that is no UUID (%s) is a 400 naming id on every route, the id not echoed',
    async (id) => {
      for (const res of [await api.get(id), await api.data(id), await api.delete(id)]) {
        const problem = JSON.parse(body(res)) as Record<string, unknown>;
        expect(res.status).toBe(400);
        expect(problem).toMatchObject({ status: 400, errors: { id: [expect.any(String)] } });
        expect(body(res)).not.toContain(id);
      }
    },
  );

  it('another tenant deleting or downloading a document gets a 404 that says nothing of it', async () => {
    const bytes = secret();
    const up = await api.upload(Buffer.from(bytes), JSON.stringify({ metadata: { name: 'mine' } }));
    expect(up.status).toBe(201);
    const id = up.body.id as string;
    const other = await ctx.newTenant('Other');
    const theirs = documentsApi(ctx, (await ctx.newApplication(other, 'private', [...ALL])).key);
    const before = await storedRows(ctx, tenant.tenantId);
    for (const res of [await theirs.data(id), await theirs.delete(id), await theirs.get(id)]) {
      expect(res.status).toBe(404);
      expect(body(res)).not.toContain(bytes);
      expect(body(res)).not.toContain('mine');
    }
    expect(await storedRows(ctx, tenant.tenantId)).toEqual(before);
    expect((await api.data(id).expect(200)).body.toString()).toBe(bytes);
  });

  it('document bytes reach no log line and no error body, uploaded, downloaded or refused', async () => {
    const kept = secret();
    const up = await api.upload(Buffer.from(kept), undefined, 'text/plain');
    expect(up.status).toBe(201);
    expect((await api.data(up.body.id as string).expect(200)).body.toString()).toBe(kept);
    const refused = secret();
    for (const request of ['{"metadata": {"a": 1}}', 'not json', '{"other": true}']) {
      const res = await api.upload(Buffer.from(refused), request);
      expectProblem(res, 400);
      expect(res.text).not.toContain(refused);
    }
    const logs = ctx.logs.join('\n');
    expect(logs).not.toContain(kept);
    expect(logs).not.toContain(refused);
  });

  it('a download, whose type the uploader chose, is sandboxed like any answer a tenant chose', async () => {
    const page = '<script>document.title = "ran"</script>';
    const up = await api.upload(Buffer.from(page), undefined, 'text/html');
    const res = await api.data(up.body.id as string).expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-disposition']).toMatch(/^attachment/);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(String(res.headers['content-security-policy'])).toMatch(/^sandbox;/);
  });

  it('a document deleted while its download starts is a 404 in the common format, not a bare 400', async () => {
    const id = (await api.upload(Buffer.from(secret())).expect(201)).body.id as string;
    const repo = ctx.get(DocumentsRepository);
    const find = repo.find.bind(repo);
    const spy = jest.spyOn(repo, 'find').mockImplementationOnce(async (tenantId, documentId) => {
      const row = await find(tenantId, documentId);
      await repo.delete(tenantId, documentId);
      return row;
    });
    try {
      const res = await api.data(id);
      expect(res.status).toBe(404);
      expect(JSON.parse(body(res))).toMatchObject({ status: 404, title: expect.any(String) });
    } finally {
      spy.mockRestore();
    }
  });

  it('a stored chunk that fails authentication is a 500 in the common format, its bytes not sent', async () => {
    const bytes = secret();
    const id = (await api.upload(Buffer.from(bytes)).expect(201)).body.id as string;
    // Another document's sealed chunk moved under this one: the binding to the document must refuse it.
    const donor = (await api.upload(Buffer.from(secret())).expect(201)).body.id as string;
    await ctx.dataSource.query(
      `UPDATE document_chunks SET data = (SELECT data FROM document_chunks WHERE tenant_id = $1 AND document_id = $3)
        WHERE tenant_id = $1 AND document_id = $2`,
      [tenant.tenantId, id, donor],
    );
    const res = await api.data(id);
    expect(res.status).toBe(500);
    expect(JSON.parse(body(res))).toMatchObject({ status: 500, title: expect.any(String) });
    expect(body(res)).not.toContain(bytes);
  });
});
