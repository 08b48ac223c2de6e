import { ApiError } from '../../src/common/api-error';
import { ReactorsService } from '../../src/reactors/reactors.service';
import { recordsOf } from '../support/audit';
import { newReactor, reactorsApi } from '../support/reactor-factory';
import { statementsOf } from '../support/statements';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, tokenApp } from '../support/token-factory';

/**
 * A warm reaction reads its argument tokens and writes its audit records, two statements: the reactor and the
 * formula it runs come from the per-replica ReactorCache, which a change to either empties at once.
 */
const onPostgres = process.env.DATABASE_URL ? it : it.skip;

describe('statements per reaction', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let caller: Awaited<ReturnType<typeof tokenApp>>;
  let card: string;
  let api: ReturnType<typeof reactorsApi>;

  beforeAll(async () => {
    // No scheduled jobs: the sealer's own statements would mix with the request's.
    ctx = await TestContext.create({ env: { JOBS_ENABLED: 'false' } });
    tenant = await ctx.newTenant();
    caller = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
    card = (await caller.api.create({ type: 'card', data: cardData() }).expect(201)).body.id as string;
    api = reactorsApi(ctx, tenant);
  });
  afterAll(() => ctx.close());

  const react = (reactorId: string) =>
    api.react(reactorId, { args: { card: `{{ ${card} }}` } }, caller.key).expect(200);

  it('a warm reaction is two statements: the token read, then its audit records', async () => {
    const { reactorId } = await newReactor(ctx, tenant, {
      request_parameters: [{ name: 'card.number', type: 'string' }],
    });
    await react(reactorId);
    const before = (await recordsOf(ctx, tenant.tenantId, 'react', reactorId)).length;
    let number = '';
    const sent = await statementsOf(async () => {
      number = (await react(reactorId)).body.raw.card.number as string;
    });
    expect(sent).toHaveLength(2);
    expect(sent[0]).toMatch(/FROM tokens/);
    expect(sent[1]).toMatch(/INSERT INTO audit_records/);
    expect(number).toMatch(/^\d{16}$/);
    expect(await recordsOf(ctx, tenant.tenantId, 'react', reactorId)).toHaveLength(before + 1);
  });

  it('runs the new configuration and code at once after the reactor or its formula changes', async () => {
    const { formulaId, reactorId } = await newReactor(ctx, tenant, {
      code: 'module.exports = async function (req) { return { raw: req.configuration }; };',
    });
    expect((await react(reactorId)).body.raw).toEqual({ currency: 'USD' });

    await api.update(reactorId, { name: 'Reactor', configuration: { currency: 'EUR' } }).expect(200);
    expect((await react(reactorId)).body.raw).toEqual({ currency: 'EUR' });

    const code = `module.exports = async function (req) { return { raw: { changed: req.configuration.currency } }; };`;
    const formula = (await api.getFormula(formulaId).expect(200)).body as Record<string, unknown>;
    const { id: _id, created_at: _c, created_by: _cb, modified_at: _m, modified_by: _mb, ...body } = formula;
    await api.updateFormula(formulaId, { ...body, code }).expect(200);
    expect((await react(reactorId)).body.raw).toEqual({ changed: 'EUR' });

    await api.delete(reactorId).expect(204);
    await api.react(reactorId, { args: {} }, caller.key).expect(404);
  });

  onPostgres(
    'another replica forgets a deleted reactor through NOTIFY, well within the cache TTL',
    async () => {
      const { reactorId } = await newReactor(ctx, tenant, {});
      const remote = (await ctx.secondInstance()).app.get(ReactorsService);
      expect((await remote.load(tenant.tenantId, reactorId)).reactor.id).toBe(reactorId);
      await api.delete(reactorId).expect(204);
      let gone = false;
      for (const until = Date.now() + 2000; Date.now() < until && !gone;) {
        gone = await remote.load(tenant.tenantId, reactorId).then(
          () => false,
          (err: unknown) => err instanceof ApiError && err.status === 404,
        );
        if (!gone) {
          await new Promise((r) => setTimeout(r, 20));
        }
      }
      // Far below the cache TTL (10 s): only the notification explains it.
      expect(gone).toBe(true);
    },
  );
});
