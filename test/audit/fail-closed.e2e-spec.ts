import { expectProblem } from '../support/problems';
import { TestContext } from '../support/test-app';
import { cardData, countTokens, tokenApp } from '../support/token-factory';

describe('an audit trail that cannot be written stops the action (fail closed)', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('answers 503 without data to a read, and stores nothing of a write, while audit records cannot be inserted', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant);
    const data = cardData();
    const id = (await app.api.create({ type: 'card', data })).body.id as string;
    const before = await countTokens(ctx, tenant.tenantId);

    await ctx.dataSource.query('ALTER TABLE audit_records RENAME TO audit_records_broken');
    try {
      const read = await app.api.get(id);
      expectProblem(read, 503);
      expect(JSON.stringify(read.body)).not.toContain(data.number.slice(-4));
      expect(read.body.data).toBeUndefined();
      // The one-statement read failed first; the fallback says so by SQLSTATE alone (42P01: no such table).
      const fallback = ctx.logs.filter((line) => line.includes('the audited read failed'));
      expect(fallback).toHaveLength(1);
      expect(JSON.parse(fallback[0]).err).toEqual({ code: '42P01' });
      expect(fallback[0]).not.toContain(id);
      expectProblem(await app.api.create({ type: 'card', data: cardData() }), 503);
      expectProblem(await app.api.list(), 503);
      expectProblem(await app.api.tokenize({ a: 'x' }), 503);
      expectProblem(
        await app.api.tokenize({
          a: 'x',
          b: ['y', { type: 'token', data: 'z', search_indexes: ['{{ data }}'] }],
        }),
        503,
      );
      expect(await countTokens(ctx, tenant.tenantId)).toBe(before);
    } finally {
      await ctx.dataSource.query('ALTER TABLE audit_records_broken RENAME TO audit_records');
    }
    expect((await app.api.get(id)).status).toBe(200);
  });
});
