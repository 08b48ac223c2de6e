import { loadConfig } from '../../src/config/app-config';
import { KeyInventory } from '../../src/crypto/key-inventory.service';
import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { TenantKeysRepository } from '../../src/crypto/tenant-keys.repository';
import { SoftHsm, describeWithSoftHsm } from '../support/softhsm';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, rule, tokenApp, TokensApi } from '../support/token-factory';

jest.setTimeout(180_000);

describeWithSoftHsm('moving tenant keys between the env and pkcs11 providers, and rotating HSM keys', () => {
  let hsm: SoftHsm;
  let ctx: TestContext;
  const stored: { api: TokensApi; id: string; number: string }[] = [];

  const masterKeyIds = async (): Promise<string[]> => {
    const rows: { master_key_id: string }[] = await ctx.dataSource.query(
      'SELECT DISTINCT master_key_id FROM tenant_keys ORDER BY 1',
    );
    return rows.map((r) => r.master_key_id);
  };

  /** Reads every stored token until `work` ends; every read must answer 200 with the stored number. */
  const readingDuring = async (work: () => Promise<unknown>): Promise<number> => {
    let done = false;
    let reads = 0;
    const reader = (async () => {
      while (!done) {
        for (const t of stored) {
          const res = await t.api.get(t.id);
          expect({ status: res.status, number: res.body?.data?.number }).toEqual({
            status: 200,
            number: t.number,
          });
          reads++;
        }
      }
    })();
    try {
      await work();
    } finally {
      done = true;
      await reader;
    }
    return reads;
  };

  beforeAll(async () => {
    hsm = SoftHsm.create('hsm-1', 'hsm-2');
    ctx = await TestContext.create();
    for (const name of ['One', 'Two', 'Three']) {
      const tenant = await ctx.newTenant(name);
      const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
      const card = cardData();
      const id = (await app.api.create({ type: 'card', data: card }).expect(201)).body.id;
      stored.push({ api: app.api, id, number: card.number });
    }
  });
  afterAll(async () => {
    await ctx.close();
    hsm.remove();
  });

  it('env to pkcs11: reads keep working while the keys move, with progress, and after a restart on pkcs11 only', async () => {
    expect(await masterKeyIds()).toEqual(['test-1']);
    await ctx.restart(hsm.env(['hsm-1'], TEST_MASTER_KEYS));
    const progress: [number, number][] = [];
    const reads = await readingDuring(() =>
      ctx.get(KeyRotation).rewrapUnderActiveMaster(2, (moved, total) => progress.push([moved, total])),
    );
    expect(reads).toBeGreaterThan(0);
    expect(progress.at(-1)).toEqual([6, 6]);
    expect(await masterKeyIds()).toEqual(['hsm-1']);

    await ctx.restart(hsm.env(['hsm-1']));
    for (const t of stored) {
      expect((await t.api.get(t.id).expect(200)).body.data.number).toBe(t.number);
    }
  });

  it('rotates to a new HSM key, then retires the old one only when nothing uses it', async () => {
    await ctx.restart(hsm.env(['hsm-2', 'hsm-1']));
    const rotation = ctx.get(KeyRotation);
    expect((await ctx.get(KeyInventory).usageByMasterKey()).get('hsm-1')).toBe(6);
    await readingDuring(() => rotation.rewrapUnderActiveMaster());
    expect(await masterKeyIds()).toEqual(['hsm-2']);
    expect((await ctx.get(KeyInventory).usageByMasterKey()).get('hsm-1')).toBeUndefined();
    await ctx.restart(hsm.env(['hsm-2']));
    for (const t of stored) {
      expect((await t.api.get(t.id).expect(200)).body.data.number).toBe(t.number);
    }
  });

  it('pkcs11 back to env, reads in flight; then env alone opens everything', async () => {
    await ctx.restart({ ...hsm.env(['hsm-2'], TEST_MASTER_KEYS), VAULT_KEY_PROVIDER: 'env' });
    await readingDuring(() => ctx.get(KeyRotation).rewrapUnderActiveMaster());
    expect(await masterKeyIds()).toEqual(['test-1']);
    await ctx.restart({});
    for (const t of stored) {
      expect((await t.api.get(t.id).expect(200)).body.data.number).toBe(t.number);
    }
  });

  it('refuses to boot on pkcs11 alone while tenant keys are still wrapped by the env key', async () => {
    const service = new MasterKeyring(
      loadConfig({ NODE_ENV: 'test', ...hsm.env(['hsm-2']) }),
      ctx.get(TenantKeysRepository),
    );
    await expect(service.onModuleInit()).rejects.toThrow(/"test-1".*VAULT_PKCS11_KEY_LABELS/);
    service.onModuleDestroy();
  });
});
