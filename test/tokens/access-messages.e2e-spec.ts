import { expectProblem } from '../support/problems';
import { TestContext } from '../support/test-app';
import { cardData, rule, tokenApp } from '../support/token-factory';

describe('a 403 of the access rules says what is missing', () => {
  let ctx: TestContext;
  beforeAll(async () => {
    ctx = await TestContext.create();
  });
  afterAll(() => ctx.close());

  it('names the container and the permission no rule grants, on create and on a move', async () => {
    const tenant = await ctx.newTenant();
    // The README's first attempt: a reveal rule for reading cards only.
    const app = await tokenApp(
      ctx,
      tenant,
      [rule('/pci/', 'reveal', ['token:read'])],
      ['token:create', 'token:read', 'token:update'],
    );
    const res = await app.api.create({ type: 'card', data: cardData() });
    expectProblem(res, 403);
    expect(res.body.detail).toBe('No access rule of this application grants token:create on /pci/high/.');
    const mover = await tokenApp(ctx, tenant, [
      rule('/general/', 'mask', ['token:create', 'token:read', 'token:update']),
    ]);
    const token = await mover.api.create({ type: 'token', data: 'x' });
    expect(token.status).toBe(201);
    const moved = await mover.api.patch(token.body.id, { containers: ['/other/'] });
    expectProblem(moved, 403);
    expect(moved.body.detail).toBe('No access rule of this application grants token:update on /other/.');
  });
});
