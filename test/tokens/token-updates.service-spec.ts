import { Principal } from '../../src/access/principal';
import { DedupRateLimit } from '../../src/tokens/dedup-rate-limit';
import { TokenUpdates } from '../../src/tokens/token-updates.service';
import { TokensRepository } from '../../src/tokens/tokens.repository';
import { recordsOf } from '../support/audit';
import { TestContext } from '../support/test-app';
import { rawToken, tokenApp } from '../support/token-factory';

/**
 * An update whose compare-and-swap finds the token changed reads it again and retries (at most five
 * attempts, then 409), each attempt one transaction: a stale attempt leaves no record behind.
 */
describe('TokenUpdates', () => {
  let ctx: TestContext;
  let tenantId: string;
  let principal: Principal;
  let create: (body: object) => Promise<string>;

  beforeAll(async () => {
    ctx = await TestContext.create();
    const tenant = await ctx.newTenant();
    tenantId = tenant.tenantId;
    const app = await tokenApp(ctx, tenant);
    principal = await ctx.principalOf(app);
    create = async (body) => ((await app.api.create(body).expect(201)).body as { id: string }).id;
  });
  afterAll(() => ctx.close());
  afterEach(() => jest.restoreAllMocks());

  it('retries a stale attempt and writes once, charging the deduplication allowance once', async () => {
    const id = await create({ type: 'token', data: 'x', metadata: { n: '0' } });
    const save = jest.spyOn(ctx.get(TokensRepository), 'save').mockResolvedValueOnce(false);
    const take = jest.spyOn(ctx.get(DedupRateLimit), 'take');
    const updated = await ctx
      .get(TokenUpdates)
      .update(principal, id, { metadata: { n: '1' }, deduplicate_token: true });
    expect(updated).toMatchObject({ id, metadata: { n: '1' }, deduplicate_token: true });
    expect(save).toHaveBeenCalledTimes(2);
    expect(take).toHaveBeenCalledTimes(1);
    expect(await recordsOf(ctx, tenantId, 'update', id)).toHaveLength(1);
  });

  it('answers 409 after five stale attempts and changes nothing', async () => {
    const id = await create({ type: 'token', data: 'y', metadata: { n: '0' } });
    const save = jest.spyOn(ctx.get(TokensRepository), 'save').mockResolvedValue(false);
    await expect(ctx.get(TokenUpdates).update(principal, id, { metadata: { n: '1' } })).rejects.toMatchObject(
      { status: 409 },
    );
    expect(save).toHaveBeenCalledTimes(5);
    expect((await rawToken(ctx, tenantId, id)).metadata).toEqual({ n: '0' });
    expect(await recordsOf(ctx, tenantId, 'update', id)).toHaveLength(0);
  });
});
