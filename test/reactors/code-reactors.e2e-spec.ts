import { expectProblem } from '../support/problems';
import { formulaBody, newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

const SDK = '@basis-theory/basis-theory-reactor-formulas-sdk-js';
const ECHO =
  'module.exports = async function (req) { return { raw: { args: req.args, configuration: req.configuration } }; };';

describe('code reactors', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof reactorsApi>;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: '3000' } });
    tenant = await ctx.newTenant('Acme');
    api = reactorsApi(ctx, tenant);
    caller = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => ctx.close());

  const body = (overrides: Record<string, unknown> = {}) => ({
    name: 'Echo',
    code: ECHO,
    configuration: { currency: 'USD' },
    ...overrides,
  });
  const patch = (id: string, value: unknown, type = 'application/merge-patch+json') =>
    ctx.http
      .patch(`/reactors/${id}`)
      .set('BT-API-KEY', tenant.key)
      .set('Content-Type', type)
      .send(JSON.stringify(value));

  it('creates, gets and lists a code reactor, with its code, runtime and state', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:create']);
    const res = await api.create(
      body({
        application: { id: app.id },
        runtime: { image: 'node22', dependencies: { [SDK]: '^1.0.0' }, timeout: 2 },
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      tenant_id: tenant.tenantId,
      name: 'Echo',
      state: 'active',
      formula: null,
      code: ECHO,
      runtime: { image: 'node22', dependencies: { [SDK]: '^1.0.0' }, timeout: 2 },
      configuration: { currency: 'USD' },
      application: expect.objectContaining({
        id: app.id,
        name: 'private app',
        type: 'private',
        tenant_id: tenant.tenantId,
      }),
      created_by: expect.any(String),
      created_at: expect.any(String),
      modified_by: null,
      modified_at: null,
    });
    expect((await api.get(res.body.id)).body).toEqual(res.body);
    const listed = await api.list(`?id=${res.body.id}`);
    expect(listed.body.data).toEqual([res.body]);
    const minimal = await api.create({ name: 'Minimal', code: ECHO });
    expect(minimal.body).toMatchObject({
      configuration: {},
      runtime: { image: 'node-bt', dependencies: {}, timeout: null },
      application: null,
    });
  });

  it('stores the configuration encrypted', async () => {
    const res = await api.create(body({ configuration: { API_KEY: 'sk_live_code_secret' } }));
    const rows: { configuration: Buffer }[] = await ctx.dataSource.query(
      'SELECT configuration FROM reactors WHERE tenant_id = $1 AND id = $2',
      [tenant.tenantId, res.body.id],
    );
    expect(Buffer.from(rows[0].configuration).toString('latin1')).not.toContain('sk_live_code_secret');
  });

  it.each([
    ['both code and a formula', { formula: { id: '00000000-0000-4000-8000-000000000000' } }, 'code'],
    ['neither code nor a formula', { code: undefined }, 'code'],
    ['an empty code', { code: '' }, 'code'],
    [
      'a configuration value that is not a string',
      { configuration: { retries: 3 } },
      'configuration.retries',
    ],
    ['an unknown runtime image', { runtime: { image: 'python3' } }, 'runtime.image'],
    ['a timeout that is not whole seconds', { runtime: { timeout: 1.5 } }, 'runtime.timeout'],
    ['a timeout over the sandbox limit', { runtime: { timeout: 4 } }, 'runtime.timeout'],
    ['a runtime option the sandbox lacks', { runtime: { warm_concurrency: 2 } }, 'runtime.warm_concurrency'],
    ['a runtime that is not an object', { runtime: 'node22' }, 'runtime'],
  ])('rejects %s with 400 naming the field', async (_label, override, path) => {
    expectProblem(await api.create(body(override)), 400, [path]);
  });

  it('names the supported images and the modules the sandbox provides', async () => {
    const image = await api.create(body({ runtime: { image: 'node16' } }));
    expect(image.body.errors['runtime.image']).toEqual(['must be one of: node-bt, node22']);
    const deps = await api.create(body({ runtime: { dependencies: { stripe: '18.4.0', [SDK]: '1' } } }));
    expectProblem(deps, 400, ['runtime.dependencies']);
    const [message] = deps.body.errors['runtime.dependencies'] as string[];
    for (const name of [SDK, 'axios', 'node-fetch']) {
      expect(message).toContain(name);
    }
    expect(message).not.toContain('stripe');
  });

  it('refuses code that does not compile with 422 and its position', async () => {
    const res = await api.create(body({ code: 'module.exports = async function (req) {' }));
    expectProblem(res, 422, ['code']);
  });

  it('runs the code with detokenized arguments as sent (no parameter filtering) and its configuration', async () => {
    const number = cardData().number;
    const card = await caller.api.create({ type: 'card', data: { ...cardData(), number } });
    const id = (await api.create(body())).body.id;
    const res = await api.react(
      id,
      { args: { card: `{{ ${card.body.id} }}`, extra: { nested: [1, 'two'] } } },
      caller.key,
    );
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tokens: null,
      raw: {
        args: { card: expect.objectContaining({ number }), extra: { nested: [1, 'two'] } },
        configuration: { currency: 'USD' },
      },
    });
  });

  it('tokenizes under its application and maps the SDK errors', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:create']);
    const code = `const { BadRequestError } = require('${SDK}');
      module.exports = async function (req) {
        if (req.args.fail) throw new BadRequestError('no amount');
        return { raw: { ok: true }, tokenize: { secret: req.args.secret } };
      };`;
    const id = (await api.create(body({ code, application: { id: app.id } }))).body.id;
    const ok = await api.react(id, { args: { secret: 'hidden' } }, caller.key);
    expect(ok.status).toBe(200);
    expect(ok.body.raw).toEqual({ ok: true });
    expect(ok.body.tokens.secret).toEqual(expect.any(String));
    expect(ok.body.tokens.secret).not.toBe('hidden');
    expectProblem(await api.react(id, { args: { fail: true } }, caller.key), 400);
  });

  it('ends a run at its own runtime.timeout', async () => {
    const id = (
      await api.create(
        body({ code: 'module.exports = async () => { while (true) {} };', runtime: { timeout: 1 } }),
      )
    ).body.id;
    const res = await api.react(id, {}, caller.key);
    expect(res.status).toBeGreaterThanOrEqual(400);
    expect(res.body.status).toBe(res.status);
  });

  it('replaces a code reactor, but never turns one kind into the other', async () => {
    const { reactorId: formulaReactor } = await newReactor(ctx, tenant, formulaBody({ configuration: [] }), {
      configuration: {},
    });
    expectProblem(await api.update(formulaReactor, { name: 'x', configuration: {}, code: ECHO }), 400, [
      'code',
    ]);
    expectProblem(await api.update(formulaReactor, { name: 'x', configuration: {}, runtime: {} }), 400, [
      'runtime',
    ]);
    const id = (await api.create(body())).body.id;
    expectProblem(
      await api.update(id, {
        name: 'x',
        code: ECHO,
        formula: { id: '00000000-0000-4000-8000-000000000000' },
      }),
      400,
      ['formula.id'],
    );
    expectProblem(await api.update(id, { name: 'x' }), 400, ['code']);
    const replaced = await api.update(id, {
      name: 'Replaced',
      code: 'module.exports = async () => ({ raw: { v: 2 } });',
      runtime: { timeout: 2 },
    });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({
      name: 'Replaced',
      configuration: {},
      runtime: { image: 'node-bt', timeout: 2 },
      modified_by: expect.any(String),
    });
    expect((await api.react(id, {}, caller.key)).body.raw).toEqual({ v: 2 });
  });

  it('patches with a JSON merge patch: configuration and runtime merge, the rest replaces', async () => {
    const app = await ctx.newApplication(tenant, 'public', ['token:create']);
    const id = (
      await api.create(
        body({ configuration: { a: '1', b: '2' }, application: { id: app.id }, runtime: { timeout: 2 } }),
      )
    ).body.id;
    const res = await patch(id, {
      name: 'Patched',
      configuration: { b: null, c: '3' },
      runtime: { image: 'node22' },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Patched',
      code: ECHO,
      configuration: { a: '1', c: '3' },
      application: { id: app.id },
      runtime: { image: 'node22', timeout: 2 },
    });
    const cleared = await patch(id, {
      application: null,
      code: 'module.exports = async () => ({ raw: 1 });',
    });
    expect(cleared.body).toMatchObject({
      application: null,
      name: 'Patched',
      code: 'module.exports = async () => ({ raw: 1 });',
    });
    expectProblem(await patch(id, { name: null }), 400, ['name']);
    expectProblem(await patch(id, { code: null }), 400, ['code']);
    expectProblem(await patch(id, { configuration: { n: 1 } }), 400, ['configuration.n']);
    expectProblem(await patch(id, { formula: { id: '00000000-0000-4000-8000-000000000000' } }), 400);
    expectProblem(await patch(id, { name: 'x' }, 'application/json'), 415);
    expectProblem(await patch('00000000-0000-4000-8000-000000000000', { name: 'x' }), 404);
    expect((await api.get(id)).body.name).toBe('Patched');
  });

  it('patches a formula reactor against its formula', async () => {
    const { reactorId } = await newReactor(ctx, tenant);
    const res = await patch(reactorId, { configuration: { currency: 'EUR' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      configuration: { currency: 'EUR' },
      code: null,
      formula: { name: 'Echo' },
    });
    expectProblem(await patch(reactorId, { configuration: { currency: 1 } }), 400, [
      'configuration.currency',
    ]);
    expectProblem(await patch(reactorId, { code: ECHO }), 400, ['code']);
  });

  it('keeps tenants apart', async () => {
    const id = (await api.create(body())).body.id;
    const other = await ctx.newTenant('Other');
    const theirs = reactorsApi(ctx, other);
    expectProblem(await theirs.get(id), 404);
    expectProblem(
      await ctx.http
        .patch(`/reactors/${id}`)
        .set('BT-API-KEY', other.key)
        .set('Content-Type', 'application/merge-patch+json')
        .send('{"name":"x"}'),
      404,
    );
  });
});
