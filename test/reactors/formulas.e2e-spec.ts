import { ReactorFormulasService } from '../../src/reactor-formulas/reactor-formulas.service';
import { expectProblem } from '../support/problems';
import { formulaBody, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';

const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGBgAAAABQABpfZFQAAAAABJRU5ErkJggg==';

describe('reactor formulas', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let other: TestTenant;
  let api: ReturnType<typeof reactorsApi>;
  let officialId: string;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Acme');
    other = await ctx.newTenant('Other');
    api = reactorsApi(ctx, tenant);
    const official = await ctx
      .get(ReactorFormulasService)
      .createOfficial(formulaBody({ name: 'Official echo', type: 'official' }) as never);
    officialId = official.id;
  });
  afterAll(() => ctx.close());

  it('creates a private formula and reads it back', async () => {
    const res = await api.createFormula(formulaBody({ icon: PNG }));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Echo',
      description: 'Returns its arguments',
      type: 'private',
      status: 'verified',
      icon: PNG,
      code: formulaBody().code,
      configuration: [{ name: 'currency', description: 'ISO 4217', type: 'string' }],
      request_parameters: [{ name: 'amount', description: null, type: 'number', optional: false }].map(
        (p) => ({ ...p, optional: true }),
      ),
      created_by: expect.any(String),
      created_at: expect.any(String),
      modified_by: null,
      modified_at: null,
    });
    expect((await api.getFormula(res.body.id)).body).toEqual(res.body);
  });

  it.each([
    ['name missing', { name: undefined }, 'name'],
    ['name too long', { name: 'n'.repeat(201) }, 'name'],
    ['type unknown', { type: 'public' }, 'type'],
    ['status unknown', { status: 'beta' }, 'status'],
    ['icon not a data URL', { icon: 'https://example.com/i.png' }, 'icon'],
    ['icon of another image type', { icon: 'data:image/gif;base64,R0lGODlh' }, 'icon'],
    ['code missing', { code: undefined }, 'code'],
    ['code too long', { code: `module.exports = async () => ({});//${'x'.repeat(50_000)}` }, 'code'],
    ['configuration missing', { configuration: undefined }, 'configuration'],
    ['configuration type', { configuration: [{ name: 'a', type: 'object' }] }, 'configuration[0].type'],
    ['configuration dotted', { configuration: [{ name: 'a.b', type: 'string' }] }, 'configuration[0].name'],
    [
      'configuration twice',
      {
        configuration: [
          { name: 'a', type: 'string' },
          { name: 'a', type: 'number' },
        ],
      },
      'configuration[1].name',
    ],
    ['parameters missing', { request_parameters: undefined }, 'request_parameters'],
    ['parameter type', { request_parameters: [{ name: 'a', type: 'date' }] }, 'request_parameters[0].type'],
    [
      'parameter optional not boolean',
      { request_parameters: [{ name: 'a', type: 'string', optional: 'yes' }] },
      'request_parameters[0].optional',
    ],
    [
      'parameter empty segment',
      { request_parameters: [{ name: 'card..number', type: 'string' }] },
      'request_parameters[0].name',
    ],
    [
      'parameter both value and parent',
      {
        request_parameters: [
          { name: 'card', type: 'string' },
          { name: 'card.number', type: 'string' },
        ],
      },
      'request_parameters[0].name',
    ],
  ])('rejects %s with 400', async (_label, override, path) => {
    const res = await api.createFormula(formulaBody(override));
    expectProblem(res, 400, [path]);
  });

  it('accepts 200-character names and 50,000-character code', async () => {
    const code = `module.exports = async () => ({});\n//${'x'.repeat(50_000 - 37)}`;
    expect(code.length).toBe(50_000);
    const res = await api.createFormula(formulaBody({ name: 'n'.repeat(200), code }));
    expect(res.status).toBe(201);
  });

  it('rejects code that does not compile with 422, the message, line and column', async () => {
    const res = await api.createFormula(
      formulaBody({ code: 'module.exports = async function (req) {\n  return {;\n};' }),
    );
    expectProblem(res, 422, ['code']);
    expect(res.body.errors.code[0]).toMatch(/line 2, column \d+/);
  });

  it('lets tenants create private formulas only', async () => {
    const res = await api.createFormula(formulaBody({ type: 'official' }));
    expectProblem(res, 403);
  });

  it('lists official formulas and the tenant’s own, with the name wildcard and pagination', async () => {
    await api.createFormula(formulaBody({ name: 'Stripe charge' }));
    await api.createFormula(formulaBody({ name: 'Adyen charge' }));
    await reactorsApi(ctx, other).createFormula(formulaBody({ name: 'Other tenant charge' }));
    const all = await api.listFormulas('?size=100');
    const names = all.body.data.map((f: { name: string }) => f.name);
    expect(names).toEqual(expect.arrayContaining(['Official echo', 'Stripe charge', 'Adyen charge']));
    expect(names).not.toContain('Other tenant charge');
    const charges = await api.listFormulas('?name=*charge');
    expect(charges.body.data.map((f: { name: string }) => f.name).sort()).toEqual([
      'Adyen charge',
      'Stripe charge',
    ]);
    const page = await api.listFormulas('?name=charge&size=1&page=2');
    expect(page.body.pagination).toEqual({ total_items: 2, page_number: 2, page_size: 1, total_pages: 2 });
    expect(page.body.data).toHaveLength(1);
    const literal = await api.listFormulas('?name=%25');
    expect(literal.body.data).toEqual([]);
  });

  it('shows official formulas read-only', async () => {
    expect((await api.getFormula(officialId)).body.type).toBe('official');
    expectProblem(await api.updateFormula(officialId, formulaBody()), 403);
    expectProblem(await api.deleteFormula(officialId), 403);
    expect((await api.getFormula(officialId)).status).toBe(200);
  });

  it('updates and deletes a private formula', async () => {
    const created = await api.createFormula(formulaBody());
    const updated = await api.updateFormula(
      created.body.id,
      formulaBody({ name: 'Renamed', status: 'coming_soon' }),
    );
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      name: 'Renamed',
      status: 'coming_soon',
      modified_by: expect.any(String),
    });
    expect((await api.deleteFormula(created.body.id)).status).toBe(204);
    expectProblem(await api.getFormula(created.body.id), 404);
  });

  it('hides other tenants’ formulas (404) and rejects bad ids (400)', async () => {
    const theirs = await reactorsApi(ctx, other).createFormula(formulaBody());
    expectProblem(await api.getFormula(theirs.body.id), 404);
    expectProblem(await api.updateFormula(theirs.body.id, formulaBody()), 404);
    expectProblem(await api.deleteFormula(theirs.body.id), 404);
    expectProblem(await api.getFormula('not-a-uuid'), 400, ['id']);
  });

  it('needs the reactor permissions', async () => {
    const app = await ctx.newApplication(tenant, 'management', ['reactor:read']);
    const limited = reactorsApi(ctx, { key: app.key });
    expect((await limited.listFormulas()).status).toBe(200);
    expectProblem(await limited.createFormula(formulaBody()), 403);
    expectProblem(await reactorsApi(ctx, { key: 'key_nope' }).listFormulas(), 401);
  });
});
