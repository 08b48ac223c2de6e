import { Principal } from '../../src/access/principal';
import { openTokenServices, TokenServices } from '../support/token-services';

/**
 * An update whose compare-and-swap finds the token changed reads it again and retries (at most five
 * attempts, then 409), each attempt one transaction: a stale attempt leaves no record behind.
 */
describe('TokenUpdates', () => {
  let s: TokenServices;
  let tenantId: string;
  let principal: Principal;
  let create: (body: Record<string, unknown>) => Promise<string>;

  beforeAll(async () => {
    s = await openTokenServices();
    tenantId = await s.newTenant();
    principal = s.principal(tenantId);
    create = async (body) => (await s.tokens.create(principal, body)).id;
  });
  afterAll(() => s.close());
  afterEach(() => jest.restoreAllMocks());

  it('retries a stale attempt and writes once, charging the deduplication allowance once', async () => {
    const id = await create({ type: 'token', data: 'x', metadata: { n: '0' } });
    const save = jest.spyOn(s.repository, 'save').mockResolvedValueOnce(false);
    const take = jest.spyOn(s.dedup, 'take');
    const updated = await s.updates.update(principal, id, { metadata: { n: '1' }, deduplicate_token: true });
    expect(updated).toMatchObject({ id, metadata: { n: '1' }, deduplicate_token: true });
    expect(save).toHaveBeenCalledTimes(2);
    expect(take).toHaveBeenCalledTimes(1);
    expect(await s.records(tenantId, 'update', id)).toHaveLength(1);
  });

  it('answers 409 after five stale attempts and changes nothing', async () => {
    const id = await create({ type: 'token', data: 'y', metadata: { n: '0' } });
    const save = jest.spyOn(s.repository, 'save').mockResolvedValue(false);
    await expect(s.updates.update(principal, id, { metadata: { n: '1' } })).rejects.toMatchObject({
      status: 409,
    });
    expect(save).toHaveBeenCalledTimes(5);
    const [row] = await s.db.dataSource.query<{ metadata: unknown }[]>(
      'SELECT metadata FROM tokens WHERE tenant_id = $1 AND id = $2',
      [tenantId, id],
    );
    expect(row.metadata).toEqual({ n: '0' });
    expect(await s.records(tenantId, 'update', id)).toHaveLength(0);
  });
});
