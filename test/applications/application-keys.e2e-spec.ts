import request from 'supertest';
import { TestContext, TestTenant } from '../support/test-app';
import { API_KEY_FORMAT, applicationBody, createApplication } from '../support/application-factory';
import { expectProblem } from '../support/problems';
import { auditRows, recordsOf } from '../support/audit';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

describe('application keys', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Keys');
  });
  afterAll(() => ctx.close());

  const keysOf = (id: string) => `/applications/${id}/keys`;

  it('holds several keys with rising versions, shows each key once and lists them without it', async () => {
    const created = await createApplication(ctx, tenant, applicationBody());
    const first = await ctx.http.post(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(201);
    const management = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
    expect(first.body).toEqual({
      id: expect.any(String),
      key: expect.stringMatching(API_KEY_FORMAT),
      version: '2',
      created_by: management.body.id,
      created_at: expect.any(String),
    });
    const second = await ctx.http.post(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(201);
    expect(second.body.version).toBe('3');

    for (const key of [created.body.key, first.body.key, second.body.key]) {
      const self = await ctx.http.get('/applications/key').set('BT-API-KEY', key).expect(200);
      expect(self.body.id).toBe(created.body.id);
    }
    const listed = await ctx.http.get(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(200);
    expect(listed.body.map((k: { version: string }) => k.version)).toEqual(['1', '2', '3']);
    expect(JSON.stringify(listed.body)).not.toContain('key_');
    const got = await ctx.http
      .get(`${keysOf(created.body.id)}/${first.body.id}`)
      .set('BT-API-KEY', tenant.key)
      .expect(200);
    expect(got.body).toEqual({ ...first.body, key: undefined });
    expect(got.body).not.toHaveProperty('key');
  });

  it('revokes a deleted key at once, keeps the others, and can delete the last one', async () => {
    const created = await createApplication(ctx, tenant, applicationBody());
    const extra = await ctx.http.post(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(201);
    const listed = await ctx.http.get(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(200);
    const original = listed.body.find((k: { version: string }) => k.version === '1');
    await ctx.http.get('/applications/key').set('BT-API-KEY', created.body.key).expect(200);

    await ctx.http
      .delete(`${keysOf(created.body.id)}/${original.id}`)
      .set('BT-API-KEY', tenant.key)
      .expect(204);
    await ctx.http.get('/applications/key').set('BT-API-KEY', created.body.key).expect(401);
    await ctx.http.get('/applications/key').set('BT-API-KEY', extra.body.key).expect(200);

    await ctx.http
      .delete(`${keysOf(created.body.id)}/${extra.body.id}`)
      .set('BT-API-KEY', tenant.key)
      .expect(204);
    await ctx.http.get('/applications/key').set('BT-API-KEY', extra.body.key).expect(401);
    const none = await ctx.http.get(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(200);
    expect(none.body).toEqual([]);
    const again = await ctx.http.get(`/applications/${created.body.id}`).set('BT-API-KEY', tenant.key);
    expect(again.status).toBe(200);

    const fresh = await ctx.http.post(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(201);
    expect(fresh.body.version).toBe('3');
    await ctx.http.get('/applications/key').set('BT-API-KEY', fresh.body.key).expect(200);
    const deletedTwice = await ctx.http
      .delete(`${keysOf(created.body.id)}/${extra.body.id}`)
      .set('BT-API-KEY', tenant.key);
    expectProblem(deletedTwice, 404);

    // Each key change is audited on the application, naming the key, never holding it.
    const created3 = await recordsOf(ctx, tenant.tenantId, 'key.create', created.body.id);
    const revoked = await recordsOf(ctx, tenant.tenantId, 'key.delete', created.body.id);
    expect(created3.map((r) => r.message)).toEqual([
      `Key ${extra.body.id} created`,
      `Key ${fresh.body.id} created`,
    ]);
    expect(revoked.map((r) => r.message)).toEqual([
      `Key ${original.id} revoked`,
      `Key ${extra.body.id} revoked`,
    ]);
    expect(JSON.stringify(await auditRows(ctx, tenant.tenantId))).not.toContain(fresh.body.key);
  });

  it('creates an application without a key when create_key is false', async () => {
    const res = await createApplication(ctx, tenant, applicationBody({ create_key: false }));
    expect(res.status).toBe(201);
    expect(res.body).not.toHaveProperty('key');
    const keys = await ctx.http.get(keysOf(res.body.id)).set('BT-API-KEY', tenant.key).expect(200);
    expect(keys.body).toEqual([]);
    const issued = await ctx.http.post(keysOf(res.body.id)).set('BT-API-KEY', tenant.key).expect(201);
    expect(issued.body.version).toBe('1');
    const self = await ctx.http.get('/applications/key').set('BT-API-KEY', issued.body.key).expect(200);
    expect(self.body.id).toBe(res.body.id);
    expectProblem(await createApplication(ctx, tenant, applicationBody({ create_key: 'no' })), 400, [
      'create_key',
    ]);
  });

  it("hides another tenant's application and keys, and refuses keys for a stronger application", async () => {
    const other = await ctx.newTenant('Other');
    const theirs = await createApplication(ctx, other, applicationBody());
    expectProblem(await ctx.http.get(keysOf(theirs.body.id)).set('BT-API-KEY', tenant.key), 404);
    expectProblem(await ctx.http.post(keysOf(theirs.body.id)).set('BT-API-KEY', tenant.key), 404);
    const keys = await ctx.http.get(keysOf(theirs.body.id)).set('BT-API-KEY', other.key).expect(200);
    expectProblem(
      await ctx.http.delete(`${keysOf(theirs.body.id)}/${keys.body[0].id}`).set('BT-API-KEY', tenant.key),
      404,
    );
    expectProblem(
      await ctx.http.get(`${keysOf(theirs.body.id)}/not-a-uuid`).set('BT-API-KEY', other.key),
      400,
    );

    const narrow = await ctx.newApplication(tenant, 'management', ['application:read', 'application:update']);
    expectProblem(await ctx.http.post(keysOf(theirs.body.id)).set('BT-API-KEY', narrow.key), 404);
    const strong = await createApplication(
      ctx,
      tenant,
      applicationBody({ type: 'management', permissions: ['reactor:read'] }),
    );
    expectProblem(await ctx.http.post(keysOf(strong.body.id)).set('BT-API-KEY', narrow.key), 403);
    const own = await ctx.http.post(keysOf(narrow.id)).set('BT-API-KEY', narrow.key).expect(201);
    expect(own.body.key).toMatch(API_KEY_FORMAT);
    const reader = await ctx.newApplication(tenant, 'management', ['application:read']);
    expectProblem(await ctx.http.post(keysOf(reader.id)).set('BT-API-KEY', reader.key), 403);
  });

  onPostgres('revokes a deleted key on another replica through the change feed', async () => {
    const replica = await ctx.secondInstance();
    const other = () => request(replica.app.getHttpServer());
    const created = await createApplication(ctx, tenant, applicationBody());
    const extra = await ctx.http.post(keysOf(created.body.id)).set('BT-API-KEY', tenant.key).expect(201);
    await other().get('/applications/key').set('BT-API-KEY', extra.body.key).expect(200);
    await ctx.http
      .delete(`${keysOf(created.body.id)}/${extra.body.id}`)
      .set('BT-API-KEY', tenant.key)
      .expect(204);
    let status = 200;
    for (let i = 0; i < 100 && status !== 401; i++) {
      status = (await other().get('/applications/key').set('BT-API-KEY', extra.body.key)).status;
      if (status !== 401) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    expect(status).toBe(401);
    await other().get('/applications/key').set('BT-API-KEY', created.body.key).expect(200);
  });
});
