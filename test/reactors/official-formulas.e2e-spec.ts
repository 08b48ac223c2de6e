import { CARD_INSIGHTS } from '../../src/reactor-formulas/official/card-insights';
import { CARD_NORMALIZER } from '../../src/reactor-formulas/official/card-normalizer';
import { expectProblem } from '../support/problems';
import { reactorsApi } from '../support/reactor-factory';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

describe('official formulas (seeded by migration)', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: ReturnType<typeof reactorsApi>;
  let caller: Awaited<ReturnType<typeof tokenApp>>;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant('Acme');
    api = reactorsApi(ctx, tenant);
    caller = await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create', 'token:read', 'token:use'])]);
  });
  afterAll(() => ctx.close());

  it('are listed for every tenant as official and verified', async () => {
    const list = await api.listFormulas('?size=100');
    const official = list.body.data.filter((f: { type: string }) => f.type === 'official');
    expect(official.map((f: { id: string }) => f.id).sort()).toEqual(
      [CARD_INSIGHTS.id, CARD_NORMALIZER.id].sort(),
    );
    expect(official.every((f: { status: string }) => f.status === 'verified')).toBe(true);
  });

  it('Card Insights describes a card token without revealing it', async () => {
    const card = await caller.api.create({ type: 'card', data: cardData({ number: '4242424242424242' }) });
    const reactor = await api.create({
      name: 'Insights',
      configuration: {},
      formula: { id: CARD_INSIGHTS.id },
    });
    const res = await api.react(reactor.body.id, { args: { card: `{{ ${card.body.id} }}` } }, caller.key);
    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({
      brand: 'visa',
      bin: '42424242',
      last4: '4242',
      length: 16,
      luhn_valid: true,
      expired: false,
    });
    expect(JSON.stringify(res.body)).not.toContain('4242424242424242');
  });

  it('Card Normalizer stores a typed-in card as a clean card token, or answers 400', async () => {
    const app = await ctx.newApplication(tenant, 'private', ['token:create']);
    const reactor = await api.create({
      name: 'Normalize',
      configuration: { container: '/pci/checkout/' },
      formula: { id: CARD_NORMALIZER.id },
      application: { id: app.id },
    });
    const res = await api.react(
      reactor.body.id,
      { args: { number: '4242 4242-4242 4242', expiration: '7/31', cvc: '123' } },
      caller.key,
    );
    expect(res.status).toBe(200);
    expect(res.body.raw).toEqual({ last4: '4242' });
    const stored = await caller.api.get(res.body.tokens.card.id);
    expect(stored.body).toMatchObject({
      type: 'card',
      containers: ['/pci/checkout/'],
      data: { number: '4242424242424242', expiration_month: 7, expiration_year: 2031, cvc: '123' },
    });
    const bad = await api.react(reactor.body.id, { args: { number: '12', expiration: '13/31' } }, caller.key);
    expectProblem(bad, 400, ['number', 'expiration']);
  });
});
