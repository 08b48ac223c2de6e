import { Clock } from '../../src/common/clock';
import { KeyInventory } from '../../src/crypto/key-inventory.service';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { KeyCryptoperiodService } from '../../src/jobs/key-cryptoperiod.service';
import { SoftHsm, describeWithSoftHsm } from '../support/softhsm';
import { TestClock } from '../support/test-clock';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';
import { ALL_TOKEN_PERMISSIONS, cardData, rule, tokenApp } from '../support/token-factory';

jest.setTimeout(120_000);

const METRICS_TOKEN = 'operator-metrics-token-0123456789abcdef';
const DAY_MS = 86_400_000;

describeWithSoftHsm('cryptoperiods, key ages on /metrics, and no master key material anywhere', () => {
  let hsm: SoftHsm;
  let ctx: TestContext;
  const clock = new TestClock();

  beforeAll(async () => {
    hsm = SoftHsm.create('hsm-1');
    ctx = await TestContext.create({
      env: {
        ...hsm.env(['hsm-1'], TEST_MASTER_KEYS),
        METRICS_TOKEN,
        VAULT_TENANT_KEY_MAX_AGE_DAYS: '30',
        VAULT_MASTER_KEY_MAX_AGE_DAYS: '90',
      },
      overrides: [{ provide: Clock, useValue: clock }],
    });
  });
  afterAll(async () => {
    await ctx.close();
    hsm.remove();
  });

  it('gives tenants whose data key passed the maximum age a new one, once; old tokens still read', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    const card = cardData();
    const id = (await app.api.create({ type: 'card', data: card }).expect(201)).body.id;
    const job = ctx.get(KeyCryptoperiodService);
    expect(await job.run()).toBe(0);

    clock.advance(31 * DAY_MS);
    expect(await job.run()).toBeGreaterThanOrEqual(1);
    const versions = await ctx.get(KeyInventory).latestDataKeyVersions();
    expect(versions.get(tenant.tenantId)).toBe(2);
    clock.reset();
    expect(await job.run()).toBe(0);
    expect((await app.api.get(id).expect(200)).body.data.number).toBe(card.number);
    // The HSM key was made on 2026-01-01 (test/support/softhsm.ts): past 90 days by the time this runs.
    expect(ctx.logs.join('\n')).toMatch(/master key hsm-1 is older than VAULT_MASTER_KEY_MAX_AGE_DAYS/);
  });

  it('shows master key ages by id and the oldest tenant key in use by kind', async () => {
    const res = await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`).expect(200);
    expect(res.text).toMatch(/token_vault_master_key_age_seconds\{key="hsm-1",provider="pkcs11"\} \d+/);
    expect(res.text).toMatch(/token_vault_tenant_key_max_age_seconds\{kind="data"\} \d+/);
    expect(res.text).toMatch(/token_vault_tenant_key_max_age_seconds\{kind="hmac"\} \d+/);
  });

  it('no master key material or PIN in logs, /metrics, errors or the database', async () => {
    const key = Buffer.from(TEST_MASTER_KEYS.split(':')[1], 'base64');
    const needles = [
      key.toString('base64'),
      key.toString('base64url'),
      key.toString('hex'),
      key.toString('latin1'),
      hsm.pin,
    ];
    const texts: string[] = [ctx.logs.join('\n')];
    texts.push((await ctx.http.get('/metrics').set('Authorization', `Bearer ${METRICS_TOKEN}`)).text);
    texts.push(JSON.stringify((await ctx.http.get('/health/ready')).body));
    texts.push(JSON.stringify((await ctx.http.get('/tokens/nope').set('BT-API-KEY', 'key_wrong')).body));
    // A tampered wrapped key: the error the keyring raises on reads.
    const keys = ctx.get(MasterKeyring).keyring;
    await keys
      .unwrap('v1.test-1.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'x')
      .catch((err: Error) => {
        texts.push(`${err.message}\n${err.stack ?? ''}`);
      });
    const tables: { table_name: string }[] = await ctx.dataSource.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'",
    );
    for (const { table_name } of tables) {
      const rows: Record<string, unknown>[] = await ctx.dataSource.query(`SELECT * FROM "${table_name}"`);
      texts.push(
        ...rows.flatMap((row) => [
          JSON.stringify(row),
          ...Object.values(row).map((v) => (Buffer.isBuffer(v) ? v.toString('latin1') : String(v))),
        ]),
      );
    }
    const all = texts.join('\n');
    expect(all).toContain('v1.hsm-1.'); // the wrapped tenant keys were scanned
    for (const needle of needles) {
      expect(all.includes(needle)).toBe(false);
    }
  });
});
