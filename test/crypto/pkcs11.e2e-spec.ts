import * as pkcs11js from 'pkcs11js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { acquirePkcs11Module, releasePkcs11Module } from '../../src/crypto/pkcs11-key-provider';
import { MasterKeyring } from '../../src/crypto/master-keyring.service';
import { SoftHsm, describeWithSoftHsm } from '../support/softhsm';
import { ensureBuild, freePort, spawnServer, waitForOutput } from '../support/spawned-server';
import { TestContext } from '../support/test-app';
import { cardData, rule, tokenApp, ALL_TOKEN_PERMISSIONS } from '../support/token-factory';

jest.setTimeout(120_000);

describeWithSoftHsm('master keys in a PKCS#11 token (SoftHSM2)', () => {
  let hsm: SoftHsm;
  let ctx: TestContext;

  beforeAll(async () => {
    hsm = SoftHsm.create('hsm-1');
    ctx = await TestContext.create({ env: hsm.env(['hsm-1']) });
  });
  afterAll(async () => {
    await ctx.close();
    hsm.remove();
  });

  it('wraps tenant keys in the token, and reads them back after a restart', async () => {
    const tenant = await ctx.newTenant();
    const app = await tokenApp(ctx, tenant, [rule('/', 'reveal', ALL_TOKEN_PERMISSIONS)]);
    const card = cardData();
    const id = (await app.api.create({ type: 'card', data: card }).expect(201)).body.id;
    const rows: { master_key_id: string; wrapped: string }[] = await ctx.dataSource.query(
      'SELECT master_key_id, wrapped FROM tenant_keys WHERE tenant_id = $1',
      [tenant.tenantId],
    );
    expect(rows.map((r) => r.master_key_id)).toEqual(['hsm-1', 'hsm-1']);
    expect(rows.every((r) => r.wrapped.startsWith('v1.hsm-1.'))).toBe(true);

    await ctx.restart(hsm.env(['hsm-1']));
    expect((await app.api.get(id).expect(200)).body.data.number).toBe(card.number);
    await ctx.http.get('/health/ready').expect(200);
  });

  it('cannot export the key: the token refuses CKA_VALUE', () => {
    // The app's own module instance: a second C_Initialize in one process is refused.
    const module = acquirePkcs11Module(hsm.library);
    try {
      const slot = module
        .C_GetSlotList(true)
        .find((s) => module.C_GetTokenInfo(s).label.trim() === hsm.tokenLabel);
      const session = module.C_OpenSession(slot!, pkcs11js.CKF_SERIAL_SESSION);
      try {
        module.C_Login(session, pkcs11js.CKU_USER, hsm.pin);
      } catch (err) {
        expect((err as pkcs11js.Pkcs11Error).code).toBe(pkcs11js.CKR_USER_ALREADY_LOGGED_IN);
      }
      module.C_FindObjectsInit(session, [{ type: pkcs11js.CKA_LABEL, value: 'hsm-1' }]);
      const key = module.C_FindObjects(session);
      module.C_FindObjectsFinal(session);
      expect(key).not.toBeNull();
      const flags = module.C_GetAttributeValue(session, key!, [
        { type: pkcs11js.CKA_SENSITIVE },
        { type: pkcs11js.CKA_EXTRACTABLE },
      ]);
      expect(flags.map((a) => a.value[0])).toEqual([1, 0]);
      let refusal: unknown = null;
      try {
        module.C_GetAttributeValue(session, key!, [{ type: pkcs11js.CKA_VALUE }]);
      } catch (err) {
        refusal = err;
      }
      expect((refusal as pkcs11js.Pkcs11Error).code).toBe(pkcs11js.CKR_ATTRIBUTE_SENSITIVE);
      module.C_CloseSession(session);
    } finally {
      releasePkcs11Module(hsm.library);
    }
  });

  it('a wrapped key moved to another tenant does not open', async () => {
    const keys = ctx.get(MasterKeyring).keyring;
    const wrapped = await keys.wrap(Buffer.alloc(32, 9), 'tenant:a:data:1');
    await expect(keys.unwrap(wrapped, 'tenant:b:data:1')).rejects.toThrow(/could not be unwrapped/);
    expect(await keys.unwrap(wrapped, 'tenant:a:data:1')).toEqual(Buffer.alloc(32, 9));
  });

  it('never logs the PIN', () => {
    expect(ctx.logs.join('\n')).not.toContain(hsm.pin);
  });
});

describeWithSoftHsm('a PKCS#11 boot problem is one line', () => {
  let hsm: SoftHsm;
  let dir: string;
  beforeAll(() => {
    ensureBuild();
    hsm = SoftHsm.create('hsm-1');
    dir = mkdtempSync(join(tmpdir(), 'tv-pkcs11-boot-'));
  }, 180_000);
  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
    hsm.remove();
  });

  const boot = async (env: Record<string, string>): Promise<{ code: number | null; output: string }> => {
    const server = spawnServer({ DATA_DIR: dir, PORT: String(await freePort()), LOG_LEVEL: 'error', ...env });
    const { code } = await server.exited;
    return { code, output: server.output().trim() };
  };

  it('stops on a wrong PIN, without echoing it', async () => {
    const wrongPin = join(dir, 'wrong-pin');
    writeFileSync(wrongPin, '0000-9999\n', { mode: 0o600 });
    const { code, output } = await boot({ ...hsm.env(['hsm-1']), VAULT_PKCS11_PIN_FILE: wrongPin });
    expect(code).toBe(1);
    expect(output).toMatch(
      /^Token Vault cannot start: PKCS#11: login to token "vault-[0-9a-f]+" failed \(CKR_PIN_INCORRECT\)/,
    );
    expect(output.split('\n')).toHaveLength(1);
    expect(output).not.toContain('0000-9999');
  });

  it('stops when the key label is not in the token', async () => {
    const { code, output } = await boot(hsm.env(['hsm-404']));
    expect(code).toBe(1);
    expect(output).toMatch(
      /^Token Vault cannot start: PKCS#11 token "vault-[0-9a-f]+" holds no AES key labelled "hsm-404"/,
    );
    expect(output.split('\n')).toHaveLength(1);
  });

  it('starts with the right settings', async () => {
    const server = spawnServer({ DATA_DIR: dir, PORT: String(await freePort()), ...hsm.env(['hsm-1']) });
    await waitForOutput(server, 'Token Vault is running');
    server.process.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    expect(server.output()).not.toContain(hsm.pin);
  });
});
