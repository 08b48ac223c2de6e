import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { ReencryptionService } from '../../src/tokens/reencryption.service';
import { TEST_MASTER_KEYS, TestContext, TestTenant } from '../support/test-app';
import { cardNumber, rule, tokenApp, TokensApi } from '../support/token-factory';

const NEW_MASTER = 'test-2:' + Buffer.alloc(32, 9).toString('base64');

describe('key rotation', () => {
  let ctx: TestContext;
  let tenant: TestTenant;
  let api: TokensApi;
  const created: { id: string; number: string; fingerprint: string }[] = [];
  const createCards = async (n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      const number = cardNumber();
      const res = await api
        .create({ type: 'card', data: { number }, search_indexes: ['{{ data.number }}'] })
        .expect(201);
      created.push({ id: res.body.id, number, fingerprint: res.body.fingerprint });
    }
  };

  /** Every token ever created reads back with its number, keeps its fingerprint and is still searchable. */
  const expectAllReadable = async (): Promise<void> => {
    for (const token of created) {
      const res = await api.get(token.id).expect(200);
      expect(res.body.data.number).toBe(token.number);
      expect(res.body.fingerprint).toBe(token.fingerprint);
    }
    const last = created[created.length - 1];
    const found = await api.search({ query: `data:${last.number}` }).expect(200);
    expect(found.body.data.map((t: { id: string }) => t.id)).toEqual([last.id]);
  };

  const versions = async (): Promise<number[]> =>
    (
      await ctx.dataSource.query(
        'SELECT DISTINCT data_key_version AS v FROM tokens WHERE tenant_id = $1 ORDER BY 1',
        [tenant.tenantId],
      )
    ).map((r: { v: number }) => r.v);

  beforeAll(async () => {
    ctx = await TestContext.create();
    tenant = await ctx.newTenant();
    api = (
      await tokenApp(ctx, tenant, [rule('/', 'reveal', ['token:create', 'token:read', 'token:search'])], [])
    ).api;
    await createCards(3);
  });
  afterAll(() => ctx.close());

  it('keeps old and new tokens readable across a tenant data-key rotation', async () => {
    const version = await ctx.get(KeyRotation).rotateDataKey(tenant.tenantId);
    expect(version).toBe(2);
    await createCards(2);
    expect(await versions()).toEqual([1, 2]);
    await expectAllReadable();
  });

  it('re-wraps every tenant key under a new master key, with the old one still listed', async () => {
    await ctx.restart({ VAULT_MASTER_KEYS: `${NEW_MASTER},${TEST_MASTER_KEYS}` });
    const moved = await ctx.get(KeyRotation).rewrapUnderActiveMaster();
    expect(moved).toBeGreaterThanOrEqual(3);
    const masters = await ctx.dataSource.query('SELECT DISTINCT master_key_id AS m FROM tenant_keys');
    expect(masters).toEqual([{ m: 'test-2' }]);
    await createCards(1);
    await expectAllReadable();
    // Once everything is re-wrapped, the old master key can be dropped.
    await ctx.restart({ VAULT_MASTER_KEYS: NEW_MASTER });
    await expectAllReadable();
  });

  it('resumes re-encryption after a restart in the middle and loses nothing', async () => {
    await ctx.get(KeyRotation).rotateDataKey(tenant.tenantId);
    await expect(
      ctx.get(ReencryptionService).reencryptAll(2, () => {
        throw new Error('simulated crash after the first batch');
      }),
    ).rejects.toThrow('simulated crash');
    expect(await versions()).toEqual([1, 2, 3]);
    await ctx.restart({ VAULT_MASTER_KEYS: NEW_MASTER });
    await createCards(1);
    const total = await ctx.get(ReencryptionService).reencryptAll(2);
    expect(total).toBe(created.length - 1 - 2);
    expect(await versions()).toEqual([3]);
    await expectAllReadable();
  });
});
