import { ProxiesService } from '../../src/proxies/proxies.service';
import { expectProblem } from '../support/problems';
import { TestContext, TestTenant } from '../support/test-app';

const onPostgres = process.env.DATABASE_URL ? it : it.skip;

const TRANSFORM =
  'module.exports = async function (req) { return { body: req.args.body, headers: req.args.headers }; };';

/** /proxies CRUD: every rule of spec §2.4/§4.6 and DESIGN §7, on a real database. */
describe('/proxies', () => {
  let ctx: TestContext;
  let tenant: TestTenant;

  const body = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: 'Acme Payments',
    destination_url: 'https://api.acme-payments.example/v1',
    ...overrides,
  });
  const api = (key = tenant.key) => ({
    create: (b: Record<string, unknown>) => ctx.http.post('/proxies').set('BT-API-KEY', key).send(b),
    update: (id: string, b: Record<string, unknown>) =>
      ctx.http.put(`/proxies/${id}`).set('BT-API-KEY', key).send(b),
    get: (id: string) => ctx.http.get(`/proxies/${id}`).set('BT-API-KEY', key),
    list: (query = '') => ctx.http.get(`/proxies${query}`).set('BT-API-KEY', key),
    delete: (id: string) => ctx.http.delete(`/proxies/${id}`).set('BT-API-KEY', key),
  });

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Acme');
  });
  afterAll(() => ctx.close());

  it('creates a proxy with its defaults and a random key, and reads it back', async () => {
    const res = await api().create(body());
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: tenant.tenantId,
      key: expect.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{33}$/),
      name: 'Acme Payments',
      destination_url: 'https://api.acme-payments.example/v1',
      request_transform: null,
      response_transform: null,
      request_transforms: null,
      response_transforms: null,
      application_id: null,
      configuration: null,
      require_auth: true,
      disable_detokenization: false,
      created_by: expect.any(String),
      created_at: expect.any(String),
      modified_by: null,
      modified_at: null,
    });
    expect((await api().get(res.body.id)).body).toEqual(res.body);
    const other = await api().create(body());
    expect(other.body.key).not.toBe(res.body.key);
  });

  it('keeps transforms, application, configuration and require_auth', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:use']);
    const res = await api().create(
      body({
        request_transform: { code: TRANSFORM },
        response_transform: { code: TRANSFORM },
        application: { id: app.id },
        configuration: { api_key: 'sk_live_partner_secret' },
        require_auth: false,
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      request_transform: { code: TRANSFORM },
      response_transform: { code: TRANSFORM },
      application_id: app.id,
      configuration: { api_key: 'sk_live_partner_secret' },
      require_auth: false,
    });
    expect(res.body).not.toHaveProperty('application');
  });

  it('stores the key hashed and sealed and the configuration sealed, never in clear', async () => {
    const res = await api().create(body({ configuration: { api_key: 'sk_live_hidden_value' } }));
    const rows: Record<string, unknown>[] = await ctx.dataSource.query(
      'SELECT * FROM proxies WHERE tenant_id = $1 AND id = $2',
      [tenant.tenantId, res.body.id],
    );
    const stored = JSON.stringify(rows[0], (_k, v: unknown) =>
      v && typeof v === 'object' && (v as { type?: string }).type === 'Buffer'
        ? Buffer.from((v as { data: number[] }).data).toString('latin1')
        : v,
    );
    expect(stored).not.toContain(res.body.key);
    expect(stored).not.toContain('sk_live_hidden_value');
  });

  it('replaces every field on PUT and keeps the key', async () => {
    const created = await api().create(
      body({ configuration: { a: '1' }, request_transform: { code: TRANSFORM } }),
    );
    const res = await api().update(created.body.id, {
      name: 'Renamed',
      destination_url: 'https://other.example/api',
      require_auth: false,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      id: created.body.id,
      key: created.body.key,
      name: 'Renamed',
      destination_url: 'https://other.example/api',
      request_transform: null,
      configuration: null,
      require_auth: false,
      modified_by: expect.any(String),
      modified_at: expect.any(String),
    });
  });

  it('lists with id and name filters and pagination', async () => {
    const other = await ctx.newTenant('Lister');
    const list = api(other.key);
    const a = await list.create(body({ name: 'Stripe live' }));
    const b = await list.create(body({ name: 'Stripe test' }));
    await list.create(body({ name: 'Adyen' }));
    const byName = await list.list('?name=Stripe*');
    expect(byName.body.data.map((p: { id: string }) => p.id).sort()).toEqual([a.body.id, b.body.id].sort());
    const byId = await list.list(`?id=${a.body.id}&id=${b.body.id}`);
    expect(byId.body.pagination.total_items).toBe(2);
    const page = await list.list('?size=2&page=2');
    expect(page.body.pagination).toEqual({ total_items: 3, page_number: 2, page_size: 2, total_pages: 2 });
    expect(page.body.data).toHaveLength(1);
  });

  it('deletes, then answers 404', async () => {
    const created = await api().create(body());
    expect((await api().delete(created.body.id)).status).toBe(204);
    expectProblem(await api().get(created.body.id), 404);
    expectProblem(await api().delete(created.body.id), 404);
  });

  it("hides another tenant's proxies: 404 on get, put and delete, absent from lists", async () => {
    const created = await api().create(body());
    const stranger = await ctx.newTenant('Stranger');
    expectProblem(await api(stranger.key).get(created.body.id), 404);
    expectProblem(await api(stranger.key).update(created.body.id, body()), 404);
    expectProblem(await api(stranger.key).delete(created.body.id), 404);
    expect((await api(stranger.key).list(`?id=${created.body.id}`)).body.data).toEqual([]);
    expect((await api().get(created.body.id)).status).toBe(200);
  });

  it.each([
    ['proxy:create', 'create'],
    ['proxy:read', 'get'],
    ['proxy:read', 'list'],
    ['proxy:update', 'update'],
    ['proxy:delete', 'delete'],
  ] as const)('needs %s to %s', async (_permission, operation) => {
    const created = await api().create(body());
    const weak = await ctx.newApplication(tenant, 'management', ['reactor:read']);
    const calls = {
      create: () => api(weak.key).create(body()),
      get: () => api(weak.key).get(created.body.id),
      list: () => api(weak.key).list(),
      update: () => api(weak.key).update(created.body.id, body()),
      delete: () => api(weak.key).delete(created.body.id),
    };
    expectProblem(await calls[operation](), 403);
    const tokenApp = await ctx.newApplication(tenant, 'private', ['token:use']);
    expectProblem(await ctx.http.get('/proxies').set('BT-API-KEY', tokenApp.key), 403);
  });

  it.each([
    ['a missing name', { name: undefined }, 'name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a missing destination', { destination_url: undefined }, 'destination_url'],
    ['an http destination', { destination_url: 'http://api.example.com' }, 'destination_url'],
    ['an IP literal', { destination_url: 'https://10.0.0.1/v1' }, 'destination_url'],
    ['a decimal IP literal', { destination_url: 'https://2130706433/' }, 'destination_url'],
    ['localhost', { destination_url: 'https://localhost/' }, 'destination_url'],
    ['user information', { destination_url: 'https://user@api.example.com' }, 'destination_url'],
    ['a metadata name', { destination_url: 'https://metadata.google.internal/' }, 'destination_url'],
    [
      'transform code over 50,000 characters',
      { request_transform: { code: 'x'.repeat(50_001) } },
      'request_transform.code',
    ],
    ['a transform without code', { response_transform: {} }, 'response_transform.code'],
    [
      'a configuration value that is not a string',
      { configuration: { retries: 3 } },
      'configuration.retries',
    ],
    ['a configuration that is not an object', { configuration: ['a'] }, 'configuration'],
    ['require_auth that is not a boolean', { require_auth: 'no' }, 'require_auth'],
    ['an application id that is not a uuid', { application: { id: 'x' } }, 'application.id'],
    ['an unknown field', { destination: 'x' }, 'destination'],
  ])('refuses %s with 400', async (_case, overrides, path) => {
    const res = await api().create(body(overrides));
    expectProblem(res, 400, [path]);
  });

  it('refuses transform code that does not compile with 422 and its line', async () => {
    const res = await api().create(
      body({ request_transform: { code: 'module.exports = async function ( {' } }),
    );
    expectProblem(res, 422, ['request_transform.code']);
    expect(res.body.errors['request_transform.code'][0]).toMatch(/line 1/);
  });

  it('refuses a management application, or another tenant’s, as the application', async () => {
    const management = await ctx.newApplication(tenant, 'management', ['proxy:read']);
    expectProblem(await api().create(body({ application: { id: management.id } })), 400, ['application.id']);
    const stranger = await ctx.newTenant('Other');
    const theirs = await ctx.newApplication(stranger, 'private', ['token:use']);
    expectProblem(await api().create(body({ application: { id: theirs.id } })), 400, ['application.id']);
    const publicApp = await ctx.newApplication(tenant, 'public', ['token:create']);
    expect((await api().create(body({ application: { id: publicApp.id } }))).status).toBe(201);
  });

  it('findByKey loads a proxy by its key and forgets it at once after an update or a delete', async () => {
    const proxies = ctx.get(ProxiesService);
    const created = await api().create(body({ configuration: { region: 'eu' } }));
    const loaded = await proxies.findByKey(created.body.key);
    expect(loaded?.proxy).toMatchObject({
      id: created.body.id,
      tenantId: tenant.tenantId,
      requireAuth: true,
    });
    expect(loaded?.configuration).toEqual({ region: 'eu' });
    expect(await proxies.findByKey('not-a-key')).toBeNull();
    await api().update(created.body.id, body({ require_auth: false }));
    expect((await proxies.findByKey(created.body.key))?.proxy.requireAuth).toBe(false);
    await api().delete(created.body.id);
    expect(await proxies.findByKey(created.body.key)).toBeNull();
  });

  onPostgres('is forgotten by another replica through NOTIFY after a delete', async () => {
    const replica = await ctx.secondInstance();
    const remote = replica.app.get(ProxiesService);
    const created = await api().create(body());
    expect(await remote.findByKey(created.body.key)).not.toBeNull();
    await api().delete(created.body.id);
    let gone = false;
    for (const until = Date.now() + 2000; Date.now() < until && !gone;) {
      gone = (await remote.findByKey(created.body.key)) === null;
      if (!gone) {
        await new Promise((r) => setTimeout(r, 20));
      }
    }
    // Far below the cache TTL (10 s): only the notification explains it.
    expect(gone).toBe(true);
  });
});
