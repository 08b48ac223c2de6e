import { expectProblem } from '../support/problems';
import { formulaBody, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';

describe('reactors', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof reactorsApi>;
  let formulaId: string;

  const body = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
    name: 'Charge',
    configuration: { api_key: 'sk_live_partner_secret', retries: 3, live: true },
    formula: { id: formulaId },
    ...overrides,
  });

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Acme');
    api = reactorsApi(ctx, tenant);
    const formula = await api.createFormula(
      formulaBody({
        configuration: [
          { name: 'api_key', type: 'string' },
          { name: 'retries', type: 'number' },
          { name: 'live', type: 'boolean' },
        ],
      }),
    );
    formulaId = formula.body.id;
  });
  afterAll(() => ctx.close());

  it('creates a reactor with its formula, configuration and application', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:create']);
    const shown = await ctx.http.get(`/applications/${app.id}`).set('BT-API-KEY', tenant.key).expect(200);
    const res = await api.create(body({ application: { id: app.id } }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: tenant.tenantId,
      name: 'Charge',
      state: 'active',
      formula: expect.objectContaining({ id: formulaId, type: 'private' }),
      code: null,
      runtime: null,
      configuration: { api_key: 'sk_live_partner_secret', retries: 3, live: true },
      application: shown.body,
      created_by: expect.any(String),
      created_at: expect.any(String),
      modified_by: null,
      modified_at: null,
    });
    expect(shown.body).toMatchObject({
      id: app.id,
      tenant_id: tenant.tenantId,
      permissions: ['token:create'],
    });
    expect(res.body.application).not.toHaveProperty('key');
    expect((await api.get(res.body.id)).body).toEqual(res.body);
    const listed = (await api.list(`?id=${res.body.id}`)).body.data;
    expect(listed).toEqual([res.body]);
    const updated = await api.update(res.body.id, body({ name: 'Charge 2', application: { id: app.id } }));
    expect(updated.body.application).toEqual(shown.body);
  });

  it('stores the configuration encrypted', async () => {
    const res = await api.create(body());
    const rows: { configuration: Buffer }[] = await ctx.dataSource.query(
      'SELECT configuration FROM reactors WHERE tenant_id = $1 AND id = $2',
      [tenant.tenantId, res.body.id],
    );
    expect(Buffer.from(rows[0].configuration).toString('latin1')).not.toContain('sk_live_partner_secret');
  });

  it.each([
    ['a missing configuration value', { configuration: { api_key: 'k', retries: 1 } }, 'configuration.live'],
    [
      'an unknown configuration name',
      { configuration: { api_key: 'k', retries: 1, live: true, extra: 1 } },
      'configuration.extra',
    ],
    [
      'a mistyped configuration value',
      { configuration: { api_key: 'k', retries: '1', live: true } },
      'configuration.retries',
    ],
    ['a configuration that is not an object', { configuration: ['a'] }, 'configuration'],
    ['a missing name', { name: undefined }, 'name'],
    ['a name over 200 characters', { name: 'n'.repeat(201) }, 'name'],
    ['a missing formula', { formula: undefined }, 'formula'],
    ['a formula id that is not a uuid', { formula: { id: 'x' } }, 'formula.id'],
    ['an unknown formula', { formula: { id: '00000000-0000-4000-8000-000000000000' } }, 'formula.id'],
    [
      'an unknown application',
      { application: { id: '00000000-0000-4000-8000-000000000000' } },
      'application.id',
    ],
  ])('rejects %s with 400 naming the field', async (_label, override, path) => {
    expectProblem(await api.create(body(override)), 400, [path]);
  });

  it('never quotes configuration values in errors', async () => {
    const res = await api.create(
      body({ configuration: { api_key: 42, retries: 'sk_live_leak', live: true } }),
    );
    expect(JSON.stringify(res.body)).not.toContain('sk_live_leak');
  });

  it('accepts public and private applications only, of the same tenant', async () => {
    const management = await ctx.newApplication(tenant, 'management', ['reactor:read']);
    expectProblem(await api.create(body({ application: { id: management.id } })), 400, ['application.id']);
    const pub = await ctx.newApplication(tenant, 'public', ['token:create']);
    expect((await api.create(body({ application: { id: pub.id } }))).status).toBe(201);
    const other = await ctx.newTenant('Other');
    const theirs = await ctx.newApplication(other, 'private', ['token:create']);
    expectProblem(await api.create(body({ application: { id: theirs.id } })), 400, ['application.id']);
  });

  it('updates name, configuration and application but never the formula', async () => {
    const created = await api.create(body());
    const other = await api.createFormula(formulaBody({ configuration: [] }));
    expectProblem(await api.update(created.body.id, body({ formula: { id: other.body.id } })), 400, [
      'formula.id',
    ]);
    const updated = await api.update(created.body.id, {
      name: 'Renamed',
      configuration: { api_key: 'rotated', retries: 5, live: false },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'Renamed',
      formula: { id: formulaId },
      configuration: { api_key: 'rotated', retries: 5, live: false },
      modified_by: expect.any(String),
    });
    expectProblem(await api.update(created.body.id, { name: 'x', configuration: {} }), 400, [
      'configuration.api_key',
    ]);
  });

  it('lists with repeatable id and wildcard name filters', async () => {
    const a = await api.create(body({ name: 'List alpha' }));
    const b = await api.create(body({ name: 'List beta' }));
    await api.create(body({ name: 'Other name' }));
    const byId = await api.list(`?id=${a.body.id}&id=${b.body.id}`);
    expect(byId.body.data.map((r: { id: string }) => r.id).sort()).toEqual([a.body.id, b.body.id].sort());
    const byName = await api.list('?name=List*');
    expect(byName.body.data.map((r: { name: string }) => r.name).sort()).toEqual(['List alpha', 'List beta']);
    expect(byName.body.pagination).toEqual({ total_items: 2, page_number: 1, page_size: 20, total_pages: 1 });
    expectProblem(await api.list('?id=nope'), 400, ['id']);
  });

  it('deletes, blocks deleting a formula in use, and hides other tenants’ reactors', async () => {
    const created = await api.create(body());
    expectProblem(await api.deleteFormula(formulaId), 409);
    expect((await api.delete(created.body.id)).status).toBe(204);
    expectProblem(await api.get(created.body.id), 404);
    expectProblem(await api.delete(created.body.id), 404);
    const other = await ctx.newTenant('Third');
    const theirs = reactorsApi(ctx, other);
    expectProblem(await theirs.get(created.body.id), 404);
    const mine = await api.create(body());
    expectProblem(await theirs.update(mine.body.id, body()), 404);
    expectProblem(await theirs.delete(mine.body.id), 404);
    expect((await theirs.list()).body.data).toEqual([]);
  });

  it('builds reactors from official formulas too', async () => {
    const list = await api.listFormulas('?size=100');
    const official = list.body.data.find((f: { type: string }) => f.type === 'official');
    expect(official).toBeDefined();
    const config = Object.fromEntries(
      (official.configuration as { name: string; type: string }[]).map((c) => [
        c.name,
        c.type === 'number' ? 1 : c.type === 'boolean' ? true : 'x',
      ]),
    );
    expect(
      (await api.create({ name: 'From official', configuration: config, formula: { id: official.id } }))
        .status,
    ).toBe(201);
  });
});
