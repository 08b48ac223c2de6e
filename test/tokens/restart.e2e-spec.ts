import { TestContext, TestTenant } from '../support/test-app';
import { cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

/**
 * Token reads and writes are prepared statements. The embedded database is one session that outlives the
 * connections to it: a restarted server (a new connection to the same session) must not collide with the
 * statements an earlier connection prepared there.
 */
describe('tokens across a server restart on the same database', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    api = (await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create', 'token:read'])])).api;
  });
  afterAll(() => ctx.close());

  const create = (number: string) => api.create({ type: 'card', data: cardData({ number }) }).expect(201);
  const read = (id: string) => api.get(id).expect(200);

  it('creates and reads tokens before and after two restarts', async () => {
    const first = cardData().number;
    const before = await create(first);
    expect((await read(before.body.id)).body.data.number).toBe(first);
    for (let restart = 0; restart < 2; restart++) {
      await ctx.restart();
      const number = cardData().number;
      const after = await create(number);
      expect((await read(after.body.id)).body.data.number).toBe(number);
      expect((await read(before.body.id)).body.data.number).toBe(first);
    }
  });
});
