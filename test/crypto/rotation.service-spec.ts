import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { MasterKeyring, MasterKeysMismatchError } from '../../src/crypto/master-keyring.service';
import { TenantKeysRepository } from '../../src/crypto/tenant-keys.repository';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { TEST_MASTER_KEYS, testConfig } from '../support/test-app';
import { openTestDataSource, TestDataSource } from '../support/test-data-source';

const NEW_MASTER = 'test-2:' + Buffer.alloc(32, 9).toString('base64');

/** Tenant keys written, rotated and re-wrapped by KeyRotation, and read back as TenantKeysService hands them out. */
describe('KeyRotation', () => {
  let db: TestDataSource;
  let repository: TenantKeysRepository;
  const opened: MasterKeyring[] = [];

  /** A keyring, tenant key cache and rotation over `masterKeys`: one process's view of the tenant keys. */
  const boot = async (
    masterKeys = TEST_MASTER_KEYS,
  ): Promise<{ master: MasterKeyring; keys: TenantKeysService; rotation: KeyRotation }> => {
    const master = new MasterKeyring(testConfig({ VAULT_MASTER_KEYS: masterKeys }), repository);
    await master.onModuleInit();
    opened.push(master);
    const keys = new TenantKeysService(master, repository);
    return { master, keys, rotation: new KeyRotation(master, repository, db.dataLayer, keys) };
  };
  const masterKeyIds = async (): Promise<string[]> =>
    (await db.dataSource.query('SELECT DISTINCT master_key_id AS m FROM tenant_keys ORDER BY 1')).map(
      (r: { m: string }) => r.m,
    );
  /** A new tenant with version 1 of its keys, and the key material they hold. */
  const newTenant = async (rotation: KeyRotation, keys: TenantKeysService): Promise<string> => {
    const tenantId = await db.insertTenant();
    await rotation.createTenantKeys(tenantId);
    expect((await keys.activeDataKey(tenantId)).version).toBe(1);
    return tenantId;
  };

  beforeAll(async () => {
    db = await openTestDataSource();
    repository = new TenantKeysRepository(db.dataLayer);
  });
  afterAll(async () => {
    opened.forEach((m) => m.onModuleDestroy());
    await db.close();
  });

  it('adds a data-key version that new writes use, the older one still opening', async () => {
    const { keys, rotation } = await boot();
    const tenantId = await newTenant(rotation, keys);
    const first = (await keys.dataKey(tenantId, 1)).export();
    const hmac = (await keys.hmacKey(tenantId)).export();

    expect(await rotation.rotateDataKey(tenantId)).toBe(2);
    const active = await keys.activeDataKey(tenantId);
    expect(active.version).toBe(2);
    expect(active.key.export().equals(first)).toBe(false);
    expect((await keys.dataKey(tenantId, 1)).export()).toEqual(first);
    expect((await keys.hmacKey(tenantId)).export()).toEqual(hmac);
    // Another process sees the same keys.
    const other = await boot();
    expect((await other.keys.activeDataKey(tenantId)).key.export()).toEqual(active.key.export());
  });

  it('gives concurrent rotations of one tenant one version each', async () => {
    const { keys, rotation } = await boot();
    const tenantId = await newTenant(rotation, keys);
    const versions = await Promise.all([rotation.rotateDataKey(tenantId), rotation.rotateDataKey(tenantId)]);
    expect(versions.sort()).toEqual([2, 3]);
  });

  it('re-wraps every tenant key under a new master key, the old one then no longer needed', async () => {
    const before = await boot();
    const tenantId = await newTenant(before.rotation, before.keys);
    const material = (await before.keys.dataKey(tenantId, 1)).export();
    const total = Number(
      (await db.dataSource.query('SELECT count(*) AS n FROM tenant_keys'))[0].n as string | number,
    );

    const { rotation } = await boot(`${NEW_MASTER},${TEST_MASTER_KEYS}`);
    const progress: [number, number][] = [];
    expect(await rotation.rewrapUnderActiveMaster(2, (moved, left) => progress.push([moved, left]))).toBe(
      total,
    );
    expect(progress[progress.length - 1]).toEqual([total, total]);
    expect(await masterKeyIds()).toEqual(['test-2']);
    expect(await rotation.rewrapUnderActiveMaster()).toBe(0);

    const after = await boot(NEW_MASTER);
    expect((await after.keys.dataKey(tenantId, 1)).export()).toEqual(material);
    await expect(boot(TEST_MASTER_KEYS)).rejects.toThrow(MasterKeysMismatchError);
  });

  it('resumes an interrupted re-wrap where it stopped', async () => {
    const { rotation } = await boot(`${TEST_MASTER_KEYS},${NEW_MASTER}`);
    await expect(
      rotation.rewrapUnderActiveMaster(1, () => {
        throw new Error('simulated crash after the first batch');
      }),
    ).rejects.toThrow('simulated crash');
    expect(await masterKeyIds()).toEqual(['test-1', 'test-2']);
    const rest = await rotation.rewrapUnderActiveMaster();
    expect(rest).toBeGreaterThan(0);
    expect(await masterKeyIds()).toEqual(['test-1']);
  });
});
