import { TestContext, TestTenant } from '../support/test-app';
import { cardData, cardNumber, rule, tokenApp } from '../support/token-factory';
import { expectProblem } from '../support/problems';

describe('POST /detokenize', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  const detokenize = (key: string, body: unknown) =>
    ctx.http
      .post('/detokenize')
      .set('BT-API-KEY', key)
      .set('Content-Type', 'application/json')
      .send(JSON.stringify(body));

  it('replaces every expression with the data token:use shows, keeping the document shape', async () => {
    const number = cardNumber();
    const app = await tokenApp(ctx, tenant, [], ['token:create', 'token:use']);
    const card = await app.api.create({ type: 'card', data: cardData({ number }) }).expect(201);
    const text = await app.api.create({ type: 'token', data: 'hello', metadata: { k: 'v' } }).expect(201);
    const res = await detokenize(app.key, {
      number: `{{ ${card.body.id} | json: '$.number' }}`,
      card: `{{ ${card.body.id} }}`,
      greeting: `say {{ ${text.body.id} }}!`,
      meta: `{{ token: ${text.body.id} | json: '$.metadata.k' }}`,
      list: [1, true, null, 'plain'],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      number,
      card: cardData({ number }),
      greeting: 'say hello!',
      meta: 'v',
      list: [1, true, null, 'plain'],
    });
    const top = await detokenize(app.key, `{{ ${text.body.id} }}`);
    expect(top.status).toBe(200);
    expect(top.body).toBe('hello');
  });

  it('applies the token:use access rules and refuses unknown ids, missing permission and too many tokens', async () => {
    const writer = await tokenApp(ctx, tenant, [], ['token:create']);
    const number = cardNumber();
    const card = await writer.api.create({ type: 'card', data: cardData({ number }) }).expect(201);
    const other = await writer.api.create({ type: 'token', data: 'secret' }).expect(201);
    const masked = await tokenApp(ctx, tenant, [rule('/pci/', 'mask', ['token:use'])]);
    const res = await detokenize(masked.key, { n: `{{ ${card.body.id} | json: '$.number' }}` }).expect(200);
    expect(res.body.n).toBe(`${'X'.repeat(number.length - 4)}${number.slice(-4)}`);
    expectProblem(await detokenize(masked.key, { n: `{{ ${other.body.id} }}` }), 403);
    expectProblem(await detokenize(writer.key, { n: `{{ ${card.body.id} }}` }), 403);
    expectProblem(await detokenize(masked.key, { n: '{{ 7d2a7fd1-0d56-4a0b-9a43-1f8a8b1d8a01 }}' }), 400);
    const stranger = await tokenApp(ctx, await ctx.newTenant('Stranger'), [], ['token:use']);
    expectProblem(await detokenize(stranger.key, { n: `{{ ${card.body.id} }}` }), 400);
    const many = Object.fromEntries(
      Array.from({ length: 101 }, (_, i) => [
        `k${i}`,
        `{{ 00000000-0000-4000-8000-${String(i).padStart(12, '0')} }}`,
      ]),
    );
    expectProblem(await detokenize(masked.key, many), 400);
    const noData = await detokenize(masked.key, { plain: 'no expressions here' }).expect(200);
    expect(noData.body).toEqual({ plain: 'no expressions here' });
  });
});
