import { expectProblem } from '../support/problems';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

const SDK = "require('@basis-theory/basis-theory-reactor-formulas-sdk-js')";
const RETURN_ARGS = 'module.exports = async function (req) { return { raw: req.args }; };';

describe('POST /reactors/:id/react', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof reactorsApi>;
  /** The caller: may create tokens and use them. */
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    ctx = await TestContext.create({ env: { SANDBOX_WORKERS: '2', SANDBOX_TIMEOUT_MS: '1500' } });
    tenant = await ctx.newTenant('Acme');
    api = reactorsApi(ctx, tenant);
    caller = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
  });
  afterAll(() => ctx.close());

  async function reactorWith(
    code: string,
    parameters: object[] = [],
    reactor: Record<string, unknown> = {},
  ): Promise<string> {
    const { reactorId } = await newReactor(
      ctx,
      tenant,
      { code, configuration: [{ name: 'currency', type: 'string' }], request_parameters: parameters },
      reactor,
    );
    return reactorId;
  }
  const react = (id: string, body: unknown, key = caller.key) => api.react(id, body, key);

  it('fills several parameters from one card token, casts values and drops undeclared ones', async () => {
    const card = await caller.api.create({ type: 'card', data: cardData({ number: '4242424242424242' }) });
    expect(card.status).toBe(201);
    const id = await reactorWith(RETURN_ARGS, [
      { name: 'card.number', type: 'string' },
      { name: 'card.expiration_month', type: 'number' },
      { name: 'card.expiration_year', type: 'number' },
      { name: 'amount', type: 'number' },
      { name: 'capture', type: 'boolean', optional: true },
      { name: 'note', type: 'string', optional: true },
    ]);
    const res = await react(id, {
      args: {
        card: `{{ ${card.body.id} }}`,
        amount: '1999',
        capture: 'true',
        note: `ref {{ ${card.body.id} | json: '$.number' | last4 }}`,
        dropped: 'x',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      tokens: null,
      raw: {
        card: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030 },
        amount: 1999,
        capture: true,
        note: 'ref 4242',
      },
    });
  });

  it('answers 400 for a missing required parameter and for a value that cannot be cast', async () => {
    const id = await reactorWith(RETURN_ARGS, [
      { name: 'amount', type: 'number' },
      { name: 'card.number', type: 'string' },
    ]);
    expectProblem(await react(id, { args: { amount: 1 } }), 400, ['args.card.number']);
    expectProblem(await react(id, { args: { amount: 'ten', card: { number: '1' } } }), 400, ['args.amount']);
    expectProblem(await react(id, {}), 400, ['args.amount', 'args.card.number']);
  });

  it('passes the configuration and gives bt null without an application', async () => {
    const id = await reactorWith(
      'module.exports = async (req) => ({ raw: { c: req.configuration, bt: req.bt } });',
    );
    expect((await react(id, {})).body).toEqual({ tokens: null, raw: { c: { currency: 'USD' }, bt: null } });
  });

  it.each([
    ['AuthenticationError', 401],
    ['AuthorizationError', 403],
    ['BadRequestError', 400],
    ['InvalidPaymentMethodError', 402],
    ['InvalidReactorConfigurationError', 400],
    ['RateLimitError', 429],
    ['ReactorRuntimeError', 500],
    ['ServiceUnavailableError', 503],
  ])('translates %s to %i in the common error format', async (name, status) => {
    const id = await reactorWith(
      `module.exports = async () => { throw new (${SDK}.${name})({ card: 'declined' }); };`,
    );
    const res = await react(id, {});
    expectProblem(res, status, ['card']);
    expect(res.body.errors.card).toEqual(['declined']);
  });

  it('normalizes string and array SDK error arguments', async () => {
    const single = await reactorWith(
      `module.exports = async () => { throw new (${SDK}.BadRequestError)('bad'); };`,
    );
    expect((await react(single, {})).body.errors).toEqual({ error: ['bad'] });
    const list = await reactorWith(
      `module.exports = async () => { throw new (${SDK}.BadRequestError)(['a', 'b']); };`,
    );
    expect((await react(list, {})).body.errors).toEqual({ error: ['a', 'b'] });
  });

  it('returns a CustomHttpResponseError as the literal response', async () => {
    const id = await reactorWith(
      `module.exports = async () => { throw new (${SDK}.CustomHttpResponseError)({ status: 302, headers: { Location: 'https://example.com/3ds' }, body: { next: '3ds' } }); };`,
    );
    const res = await react(id, {});
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe('https://example.com/3ds');
    expect(res.body).toEqual({ next: '3ds' });
  });

  it('answers 500 with errors.error for a plain Error and for a non-Error throw', async () => {
    const plain = await reactorWith("module.exports = async () => { throw new Error('x'); };");
    const res = await react(plain, {});
    expectProblem(res, 500, ['error']);
    expect(res.body.errors.error).toEqual(['x']);
    const value = await reactorWith("module.exports = async () => { throw 'just a string'; };");
    expect((await react(value, {})).body.errors.error).toEqual(['just a string']);
    const object = await reactorWith('module.exports = async () => { throw { code: 7 }; };');
    expect((await react(object, {})).body.errors.error).toEqual(['{"code":7}']);
  });

  it('ends code that never settles with an error within the deadline', async () => {
    const id = await reactorWith('module.exports = () => new Promise(() => {});');
    const started = Date.now();
    expectProblem(await react(id, {}), 500, ['error']);
    expect(Date.now() - started).toBeLessThan(6000);
    const ok = await reactorWith(RETURN_ARGS);
    expect((await react(ok, {})).status).toBe(200);
  });

  it('gives bt the reactor application’s permissions, never the caller’s', async () => {
    const reactorApp = await ctx.newApplication(tenant, 'private', ['token:create', 'token:read'], []);
    const code = `module.exports = async (req) => {
      const created = await req.bt.tokens.create({ type: 'token', data: 'from reactor', metadata: { via: 'bt' } });
      const read = await req.bt.tokens.retrieve(created.id);
      let deleteError = null;
      try { await req.bt.tokens.delete(created.id); } catch (e) { deleteError = e.status; }
      return { raw: { id: created.id, createdBy: read.createdBy, deleteError } };
    };`;
    const id = await reactorWith(code, [], { application: { id: reactorApp.id } });
    const res = await react(id, {});
    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({ id: expect.any(String), createdBy: reactorApp.id, deleteError: 403 });
    // The caller holds token:use but not token:read; the reactor's application read the token.
    expect((await caller.api.get(res.body.raw.id)).status).toBe(403);
  });

  it('tokenizes the code’s tokenize output under the reactor’s application, or 400 without one', async () => {
    const reactorApp = await ctx.newApplication(tenant, 'private', ['token:create'], []);
    const code =
      "module.exports = async (req) => ({ raw: { ok: true }, tokenize: { secret: 'value', card: { type: 'card', data: { number: '4242424242424242' } } } });";
    const id = await reactorWith(code, [], { application: { id: reactorApp.id } });
    const res = await react(id, {});
    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({ ok: true });
    expect(res.body.tokens.secret).toEqual(expect.any(String));
    expect(res.body.tokens.card).toMatchObject({ type: 'card', created_by: reactorApp.id });
    expect(JSON.stringify(res.body)).not.toContain('4242424242424242');
    const without = await reactorWith(code);
    expectProblem(await react(without, {}), 400);
  });

  it('needs token:use on each detokenized token and refuses more than 100 tokens', async () => {
    const restricted = await tokenApp(
      ctx,
      tenant,
      [rule('/general/', 'reveal', ['token:use'])],
      ['token:create', 'token:use'],
    );
    const card = await caller.api.create({ type: 'card', data: cardData() });
    const id = await reactorWith(RETURN_ARGS, [{ name: 'card', type: 'string', optional: true }]);
    expectProblem(await react(id, { args: { card: `{{ ${card.body.id} }}` } }, restricted.key), 403);
    const ids = Array.from({ length: 101 }, (_, i) => `{{ missing-${i} }}`);
    expectProblem(await react(id, { args: { many: ids } }), 400);
    expectProblem(await react(id, { args: { card: '{{ 00000000-0000-4000-8000-000000000000 }}' } }), 400);
  });

  it('needs token:use to react, and hides other tenants’ reactors', async () => {
    const id = await reactorWith(RETURN_ARGS);
    const noUse = await tokenApp(ctx, tenant, [], ['token:create']);
    expectProblem(await react(id, {}, noUse.key), 403);
    const other = await ctx.newTenant('Other');
    const theirs = await tokenApp(ctx, other, [], ['token:use']);
    expectProblem(await react(id, {}, theirs.key), 404);
    expectProblem(await react('not-a-uuid', {}), 400, ['id']);
    expectProblem(await react(id, { args: 'text' }), 400, ['args']);
  });
});
