import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Clock } from '../../src/common/clock';
import { KeyRotation } from '../../src/crypto/key-rotation.service';
import { MasterKeyring, MasterKeysMismatchError } from '../../src/crypto/master-keyring.service';
import { TenantKeysService } from '../../src/crypto/tenant-keys.service';
import { TenantKeysRepository } from '../../src/crypto/tenant-keys.repository';
import { Database } from '../../src/database/database.service';
import { ensureBuild, freePort, spawnServer, waitForOutput } from '../support/spawned-server';
import { TEST_MASTER_KEYS, TestContext } from '../support/test-app';
import { TestClock } from '../support/test-clock';

jest.setTimeout(120_000);

const OTHER_ID = 'other-1:' + Buffer.alloc(32, 1).toString('base64');
/** The test key's id with other key material: what a mistyped or regenerated key looks like. */
const SAME_ID_WRONG_KEY = TEST_MASTER_KEYS.split(':')[0] + ':' + Buffer.alloc(32, 2).toString('base64');

describe('master keys that cannot open the tenant keys', () => {
  let ctx: TestContext;
  /** Readiness reuses its key check for 5 s: moved past that instead of waiting. */
  const clock = new TestClock();
  const repository = (): TenantKeysRepository => ctx.get(TenantKeysRepository);
  /** A second master keyring on the same database with other master keys: the boot check of another process. */
  const bootWith = async (masterKeys: string): Promise<MasterKeyring> => {
    const master = new MasterKeyring({ ...ctx.config, masterKeys }, repository());
    await master.onModuleInit();
    return master;
  };
  /** Re-wraps every tenant key under the active master key of `masterKeys`, as another replica would. */
  const rewrapWith = async (masterKeys: string): Promise<void> => {
    const master = await bootWith(masterKeys);
    const cache = new TenantKeysService(master, repository());
    await new KeyRotation(master, repository(), ctx.get(Database), cache).rewrapUnderActiveMaster();
  };

  beforeAll(async () => {
    ctx = await TestContext.create({ overrides: [{ provide: Clock, useValue: clock }] });
    await ctx.newTenant();
  });
  afterAll(() => ctx.close());

  it('refuses to boot when a wrapping master key id is not configured, naming it and the way out', async () => {
    const refusal = bootWith(OTHER_ID);
    await expect(refusal).rejects.toThrow(MasterKeysMismatchError);
    await expect(refusal).rejects.toThrow(/master key id\(s\) "test-1".*keys:rotate-master/);
  });

  it('refuses to boot when a configured id holds other key material', async () => {
    await expect(bootWith(SAME_ID_WRONG_KEY)).rejects.toThrow(/"test-1" .*do not open/);
  });

  it('boots with the new key first and the old one after it (the rotation path)', async () => {
    await expect(bootWith(`${OTHER_ID},${TEST_MASTER_KEYS}`)).resolves.toBeInstanceOf(MasterKeyring);
  });

  it('reports not ready, without key ids, once another replica rotated to a master key this one lacks', async () => {
    await ctx.http.get('/health/ready').expect(200);
    await rewrapWith(`${OTHER_ID},${TEST_MASTER_KEYS}`);
    clock.advance(5_001);
    const res = await ctx.http.get('/health/ready').expect(503);
    expect(JSON.stringify(res.body)).toMatch(/master keys do not open every tenant key/);
    expect(JSON.stringify(res.body)).not.toMatch(/other-1|test-1/);
    expect(ctx.logs.join('\n')).toMatch(/Master keys: .*other-1/);
    // Rotated back, as the operator would after giving this replica the new key.
    await rewrapWith(`${TEST_MASTER_KEYS},${OTHER_ID}`);
    clock.advance(5_001);
    await ctx.http.get('/health/ready').expect(200);
    clock.reset();
  });

  it('boots on a database without tenant keys whatever the keys', async () => {
    const empty = await TestContext.create({ env: { VAULT_MASTER_KEYS: OTHER_ID } });
    await empty.close();
  });
});

describe('the operator sees one line, not a stack', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuild();
    dir = mkdtempSync(join(tmpdir(), 'tv-master-keys-'));
  }, 180_000);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const lastLine = (output: string): string => output.trim().split('\n').pop() ?? '';

  it('names the missing master key id when started with another key', async () => {
    const env = { DATA_DIR: dir, LOG_LEVEL: 'error' };
    const first = spawnServer({
      ...env,
      PORT: String(await freePort()),
      VAULT_MASTER_KEYS: TEST_MASTER_KEYS,
    });
    // A first start makes the embedded database on disk: far slower than a boot on a busy machine.
    await waitForOutput(first, 'Token Vault is running', 150_000);
    first.process.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);

    const second = spawnServer({ ...env, PORT: String(await freePort()), VAULT_MASTER_KEYS: OTHER_ID });
    const { code } = await second.exited;
    expect(code).toBe(1);
    const line = lastLine(second.output());
    expect(line).toMatch(/^Token Vault cannot start: .*"test-1".*keys:rotate-master/);
    expect(second.output()).not.toMatch(/\bat \S+ \(|\.js:\d+/);
    expect(second.output()).not.toContain(OTHER_ID.split(':')[1]);
  }, 240_000);

  it('answers a malformed VAULT_MASTER_KEYS with one configuration line that does not echo the key', async () => {
    const secret = Buffer.alloc(20, 3).toString('base64');
    const server = spawnServer({
      DATA_DIR: dir,
      PORT: String(await freePort()),
      VAULT_MASTER_KEYS: `k1:${secret}`,
    });
    const { code } = await server.exited;
    expect(code).toBe(1);
    expect(server.output().trim()).toMatch(
      /^Configuration error: VAULT_MASTER_KEYS: entry 1 \(id "k1"\): the key must be 32 bytes, got 20$/,
    );
    expect(server.output()).not.toContain(secret);
  });
});
