import { TestContext, TestTenant } from '../support/test-app';
import {
  accessRule,
  API_KEY_FORMAT,
  applicationBody,
  createApplication,
  withoutField,
} from '../support/application-factory';
import { expectProblem } from '../support/problems';

describe('applications', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(() => ctx.close());

  describe('create and read', () => {
    it('creates an application and shows its key once', async () => {
      const res = await createApplication(
        ctx,
        tenant,
        applicationBody({ name: 'Checkout', rules: [accessRule()] }),
      );
      expect(res.status).toBe(201);
      expect(res.body).toEqual({
        id: expect.any(String),
        tenant_id: tenant.tenantId,
        name: 'Checkout',
        type: 'private',
        permissions: ['token:create', 'token:read'],
        rules: [accessRule()],
        key: expect.stringMatching(API_KEY_FORMAT),
        created_by: expect.any(String),
        created_at: expect.any(String),
        modified_by: null,
        modified_at: null,
      });
      const management = await ctx.http.get('/applications/key').set('BT-API-KEY', tenant.key).expect(200);
      expect(res.body.created_by).toBe(management.body.id);

      const got = await ctx.http
        .get(`/applications/${res.body.id}`)
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expect(got.body).toEqual(withoutField(res.body, 'key'));
      const listed = await ctx.http
        .get('/applications')
        .query({ id: res.body.id })
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expect(listed.body.data).toEqual([withoutField(res.body, 'key')]);
      const self = await ctx.http.get('/applications/key').set('BT-API-KEY', res.body.key).expect(200);
      expect(self.body).toEqual(withoutField(res.body, 'key'));
    });

    it('issues distinct keys of the form key_<base58>', async () => {
      const keys = new Set<string>();
      for (const type of ['private', 'public', 'management'] as const) {
        const permissions = type === 'management' ? ['application:read'] : ['token:create'];
        const res = await createApplication(ctx, tenant, applicationBody({ type, permissions }));
        expect(res.status).toBe(201);
        expect(res.body.key).toMatch(API_KEY_FORMAT);
        keys.add(res.body.key);
      }
      expect(keys.size).toBe(3);
      expect(tenant.key).toMatch(API_KEY_FORMAT);
    });

    it('stores only a hash of the key', async () => {
      const created = await createApplication(ctx, tenant);
      const regenerated = await ctx.http
        .post(`/applications/${created.body.id}/regenerate`)
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      const rows: Record<string, unknown>[] = await ctx.dataSource.query('SELECT * FROM applications');
      expect(rows.length).toBeGreaterThan(1);
      const stored = JSON.stringify(rows);
      for (const key of [created.body.key, regenerated.body.key, tenant.key]) {
        expect(stored).not.toContain(key);
        expect(stored).not.toContain(key.slice(4));
      }
    });

    it('sorts access rules by priority and normalizes their containers', async () => {
      const body = applicationBody({
        rules: [
          accessRule({ priority: 5, container: '/general/' }),
          accessRule({ priority: 1, container: '/PCI/High/' }),
        ],
      });
      const res = await createApplication(ctx, tenant, body);
      expect(res.status).toBe(201);
      expect(
        res.body.rules.map((r: { priority: number; container: string }) => [r.priority, r.container]),
      ).toEqual([
        [1, '/pci/high/'],
        [5, '/general/'],
      ]);
    });

    it('refuses an access rule whose container is not a container path', async () => {
      const body = applicationBody({
        rules: [accessRule(), accessRule({ container: '/pci/high' }), accessRule({ container: 'pci' })],
      });
      expectProblem(await createApplication(ctx, tenant, body), 400, [
        'rules[1].container',
        'rules[2].container',
      ]);
    });
  });

  describe('update, regenerate, delete', () => {
    it('replaces name, permissions and rules on PUT and records who changed it', async () => {
      const created = await createApplication(ctx, tenant, applicationBody({ rules: [accessRule()] }));
      const res = await ctx.http
        .put(`/applications/${created.body.id}`)
        .set('BT-API-KEY', tenant.key)
        .send({ name: 'Renamed', permissions: ['token:use'] })
        .expect(200);
      expect(res.body).toMatchObject({
        id: created.body.id,
        name: 'Renamed',
        type: 'private',
        permissions: ['token:use'],
        rules: [],
      });
      expect(res.body.key).toBeUndefined();
      expect(res.body.modified_by).toBe(created.body.created_by);
      expect(Date.parse(res.body.modified_at)).not.toBeNaN();
      // The key is unchanged by an update
      await ctx.http.get('/applications/key').set('BT-API-KEY', created.body.key).expect(200);
    });

    it('validates PUT like POST', async () => {
      const created = await createApplication(ctx, tenant);
      const res = await ctx.http
        .put(`/applications/${created.body.id}`)
        .set('BT-API-KEY', tenant.key)
        .send({ name: '', type: 'public' });
      expectProblem(res, 400, ['name', 'type']);
    });

    it('deletes an application: 204, then 404', async () => {
      const created = await createApplication(ctx, tenant);
      const res = await ctx.http
        .delete(`/applications/${created.body.id}`)
        .set('BT-API-KEY', tenant.key)
        .expect(204);
      expect(res.text).toBe('');
      expectProblem(
        await ctx.http.get(`/applications/${created.body.id}`).set('BT-API-KEY', tenant.key),
        404,
      );
      expectProblem(
        await ctx.http.delete(`/applications/${created.body.id}`).set('BT-API-KEY', tenant.key),
        404,
      );
    });

    it('answers 404 for an unknown id on every route', async () => {
      const id = '3f0b5d8e-7a1c-4e2b-9d6f-0a1b2c3d4e5f';
      expectProblem(await ctx.http.get(`/applications/${id}`).set('BT-API-KEY', tenant.key), 404);
      expectProblem(
        await ctx.http.put(`/applications/${id}`).set('BT-API-KEY', tenant.key).send({ name: 'x' }),
        404,
      );
      expectProblem(await ctx.http.post(`/applications/${id}/regenerate`).set('BT-API-KEY', tenant.key), 404);
      expectProblem(await ctx.http.delete(`/applications/${id}`).set('BT-API-KEY', tenant.key), 404);
    });
  });

  describe('tenant isolation', () => {
    let other: TestTenant;
    let theirs: { id: string; key: string };
    beforeAll(async () => {
      other = await ctx.newTenant('Globex');
      theirs = await ctx.newApplication(other, 'private', ['token:read']);
    });

    it("answers 404 for another tenant's application on get, update, delete and regenerate", async () => {
      const path = `/applications/${theirs.id}`;
      const responses = [
        await ctx.http.get(path).set('BT-API-KEY', tenant.key),
        await ctx.http
          .put(path)
          .set('BT-API-KEY', tenant.key)
          .send({ name: 'Hijacked', permissions: ['token:use'] }),
        await ctx.http.post(`${path}/regenerate`).set('BT-API-KEY', tenant.key),
        await ctx.http.delete(path).set('BT-API-KEY', tenant.key),
      ];
      for (const res of responses) {
        expectProblem(res, 404);
        expect(res.body.detail).not.toContain(other.tenantId);
      }
      // Nothing changed on their side: same name, same permissions, same key
      const mine = await ctx.http.get(path).set('BT-API-KEY', other.key).expect(200);
      expect(mine.body).toMatchObject({
        name: 'private app',
        permissions: ['token:read'],
        modified_at: null,
      });
      await ctx.http.get('/applications/key').set('BT-API-KEY', theirs.key).expect(200);
    });

    it("answers 404 for another tenant's management application too", async () => {
      const theirManagement = await ctx.http
        .get('/applications/key')
        .set('BT-API-KEY', other.key)
        .expect(200);
      expectProblem(
        await ctx.http.get(`/applications/${theirManagement.body.id}`).set('BT-API-KEY', tenant.key),
        404,
      );
    });

    it("never lists another tenant's applications", async () => {
      const mineCreated = await createApplication(ctx, tenant);
      const theirList = await ctx.http
        .get('/applications')
        .query({ size: 100 })
        .set('BT-API-KEY', other.key)
        .expect(200);
      const theirIds = theirList.body.data.map((a: { id: string }) => a.id);
      expect(theirIds).toContain(theirs.id);
      expect(theirIds).not.toContain(mineCreated.body.id);
      expect(theirList.body.data.every((a: { tenant_id: string }) => a.tenant_id === other.tenantId)).toBe(
        true,
      );
      expect(theirList.body.pagination.total_items).toBe(2);

      const byId = await ctx.http
        .get('/applications')
        .query({ id: theirs.id })
        .set('BT-API-KEY', tenant.key)
        .expect(200);
      expect(byId.body).toMatchObject({ data: [], pagination: { total_items: 0 } });
    });

    it('creates applications in the caller tenant, whatever the body says', async () => {
      const res = await createApplication(ctx, tenant, applicationBody({ tenant_id: other.tenantId }));
      expectProblem(res, 400, ['tenant_id']);
    });
  });
});
