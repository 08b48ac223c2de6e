import { newReactor, reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { tokenApp } from '../support/token-factory';

const SNOOP = `module.exports = async (req) => {
  const seen = { leaked: globalThis.leaked ?? null, shared: typeof globalThis.shared };
  globalThis.leaked = req.configuration.currency;
  globalThis.shared = { args: req.args };
  Object.prototype.polluted = req.configuration.currency;
  return { raw: seen };
};`;

describe('tenants’ reactors run alternately cannot see each other', () => {
  let ctx: TestContext;

  beforeAll(async () => {
    // One worker: both tenants' runs alternate on it (each in its own isolate, every run in a fresh context).
    ctx = await TestContext.create({ env: { SANDBOX_WORKERS: '1' } });
  });
  afterAll(() => ctx.close());

  async function setup(
    name: string,
    currency: string,
  ): Promise<{ tenant: TestTenant; id: string; key: string }> {
    const tenant = await ctx.newTenant(name);
    const { reactorId } = await newReactor(
      ctx,
      tenant,
      { code: SNOOP, request_parameters: [{ name: 'secret', type: 'string', optional: true }] },
      { configuration: { currency } },
    );
    return { tenant, id: reactorId, key: (await tokenApp(ctx, tenant, [], ['token:use'])).key };
  }

  it('keeps globals, prototypes, configuration and data apart', async () => {
    const a = await setup('Alpha', 'ALPHA-SECRET');
    const b = await setup('Beta', 'BETA-SECRET');
    for (let round = 0; round < 3; round++) {
      for (const [me, other] of [
        [a, b],
        [b, a],
      ]) {
        const res = await reactorsApi(ctx, me.tenant).react(
          me.id,
          { args: { secret: `${me.tenant.tenantId}-data` } },
          me.key,
        );
        expect(res.status).toBe(200);
        expect(res.body.raw).toEqual({ leaked: null, shared: 'undefined' });
        expect(JSON.stringify(res.body)).not.toContain(other.tenant.tenantId);
      }
    }
    // And a tenant cannot invoke or read the other's reactor.
    expect((await reactorsApi(ctx, a.tenant).react(b.id, {}, a.key)).status).toBe(404);
    expect((await reactorsApi(ctx, a.tenant).get(b.id)).status).toBe(404);
  });
  it('never runs another tenant’s private formula, even when a reactor row points at it', async () => {
    const alpha = await ctx.newTenant('Gamma');
    const beta = await ctx.newTenant('Delta');
    const own = await newReactor(ctx, alpha);
    const foreign = await newReactor(ctx, beta, {
      code: "module.exports = async () => ({ raw: 'BETA-CODE-RAN' });",
    });
    const tampered = await newReactor(ctx, alpha);
    const key = (await tokenApp(ctx, alpha, [], ['token:use'])).key;
    expect((await reactorsApi(ctx, alpha).react(own.reactorId, {}, key)).status).toBe(200);
    // Only a database write could make this row (creating or updating a reactor checks the formula). It is
    // made before the reactor's first invocation: a write behind the API's back does not evict ReactorCache.
    await ctx.dataSource.query('UPDATE reactors SET formula_id = $1 WHERE tenant_id = $2 AND id = $3', [
      foreign.formulaId,
      alpha.tenantId,
      tampered.reactorId,
    ]);
    const res = await reactorsApi(ctx, alpha).react(tampered.reactorId, {}, key);
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/formula/i);
    expect(JSON.stringify(res.body)).not.toContain('BETA-CODE-RAN');
  });
});
