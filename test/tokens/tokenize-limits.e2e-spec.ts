import { expectProblem } from '../support/problems';
import { TestContext, TestTenant } from '../support/test-app';
import { cardData, countTokens, tokenApp, TokensApi } from '../support/token-factory';

/** `{"a":{"a":...leaf...}}` as JSON text: JSON.stringify itself overflows the stack at this depth. */
function nested(depth: number, leaf: string): string {
  return '{"a":'.repeat(depth) + leaf + '}'.repeat(depth);
}

/** Issue 25.5: /tokenize bodies that used to deadlock, answer 500 or be read in full before being refused. */
describe('POST /tokenize limits', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  let key: string;
  const send = (json: string) =>
    ctx.http.post('/tokenize').set('BT-API-KEY', key).set('Content-Type', 'application/json').send(json);

  beforeAll(async () => {
    ctx = await TestContext.create();
    await ctx.vault.app.listen(0, '127.0.0.1');
    tenant = await ctx.newTenant();
    ({ api, key } = await tokenApp(ctx, tenant));
  });
  afterAll(() => ctx.close());

  it('two deduplicating requests locking the same cards in opposite order both succeed, every time', async () => {
    const cards = Array.from({ length: 8 }, () => ({
      type: 'card',
      data: cardData(),
      deduplicate_token: true,
    }));
    for (let round = 0; round < 10; round++) {
      const [a, b] = await Promise.all([api.tokenize(cards), api.tokenize([...cards].reverse())]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(b.body.map((t: { id: string }) => t.id).reverse()).toEqual(
        a.body.map((t: { id: string }) => t.id),
      );
    }
    expect(await countTokens(ctx, tenant.tenantId)).toBe(cards.length);
  });

  it('data nested 5,000 deep inside a definition is a 400 naming the path', async () => {
    const before = await countTokens(ctx, tenant.tenantId);
    for (const body of [
      `{"card": {"type": "token", "data": ${nested(5_000, '"x"')}}}`,
      `{"type": "token", "data": "x", "metadata": ${nested(5_000, '"x"')}}`,
      `[{"type": "token", "data": [${nested(65, '1')}]}]`,
    ]) {
      const res = await send(body);
      expectProblem(res, 400);
      expect(JSON.stringify(res.body)).toContain('nested deeper than');
    }
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
  });

  it('stops reading at the 101st token: what follows it is never looked at, nothing is written', async () => {
    const before = await countTokens(ctx, tenant.tenantId);
    const leaves = Array.from({ length: 101 }, (_, i) => `v${i}`);
    // Past the limit sits a body the walk would refuse for its depth: the answer is the count, so it stopped.
    const res = await send(`{"leaves": ${JSON.stringify(leaves)}, "later": ${nested(5_000, '"x"')}}`);
    expectProblem(res, 400);
    expect(res.body.detail).toBe('At most 100 tokens can be created in one request.');
    const definitions = Array.from({ length: 101 }, () => ({ type: 'card', data: cardData() }));
    const many = await send(
      `{"definitions": ${JSON.stringify(definitions)}, "later": ${nested(5_000, '"x"')}}`,
    );
    expect(many.body.detail).toBe('At most 100 tokens can be created in one request.');
    expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
    await api.tokenize(leaves.slice(1)).expect(200);
  });
});
