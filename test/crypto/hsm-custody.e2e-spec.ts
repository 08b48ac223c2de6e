import { execFile } from 'node:child_process';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FreshStore, freshStore } from '../support/fresh-store';
import { SoftHsm, describeWithSoftHsm } from '../support/softhsm';
import { ensureBuild, freePort, spawnServer, waitForOutput } from '../support/spawned-server';

jest.setTimeout(180_000);

const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);

/** What the README promises about HSM custody, checked by starting the real server on a real (SoftHSM2) token. */
describeWithSoftHsm('HSM custody: what the boot refuses, and retiring a key', () => {
  let hsm: SoftHsm;
  let store: FreshStore;

  beforeAll(async () => {
    ensureBuild();
    hsm = SoftHsm.create('hsm-1');
    hsm.generateExportable('hsm-loose');
    store = await freshStore({ migrated: true });
  }, 240_000);
  afterAll(async () => {
    chmodSync(hsm.pinFile, 0o600);
    await store.drop();
    hsm.remove();
  });

  const base = (labels: string[]): Record<string, string> => ({
    ...store.env,
    ...hsm.env(labels),
    LOG_LEVEL: 'warn',
  });
  /** A boot that must fail: its exit code and whole output. */
  const refused = async (env: Record<string, string>): Promise<{ code: number | null; output: string }> => {
    const server = spawnServer({ ...env, LOG_LEVEL: 'error', PORT: String(await freePort()) });
    const { code } = await server.exited;
    return { code, output: server.output().trim() };
  };
  /** A boot that must succeed: its output until the banner, then stopped. */
  const boots = async (env: Record<string, string>): Promise<string> => {
    const server = spawnServer({ ...env, PORT: String(await freePort()) });
    await waitForOutput(server, 'Token Vault is running', 60_000);
    server.process.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    return server.output();
  };
  const cli = async (env: Record<string, string>, args: string[]): Promise<string> => {
    const { stdout } = await run(process.execPath, [join(ROOT, 'dist', 'src', 'cli.js'), ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    return stdout;
  };

  it('refuses, in one line, a PIN file that group or others may read', async () => {
    chmodSync(hsm.pinFile, 0o644);
    try {
      const { code, output } = await refused(base(['hsm-1']));
      expect(code).toBe(1);
      expect(output).toMatch(
        /^Token Vault cannot start: PKCS#11: the PIN file \(VAULT_PKCS11_PIN_FILE\) is open to group or others \(mode 0644\): .*chmod 600/,
      );
      expect(output.split('\n')).toHaveLength(1);
      expect(output).not.toContain(hsm.pin);
    } finally {
      chmodSync(hsm.pinFile, 0o600);
    }
    const groupOnly = join(hsm.dir, 'pin-group');
    writeFileSync(groupOnly, `${hsm.pin}\n`, { mode: 0o640 });
    chmodSync(groupOnly, 0o640);
    expect((await refused({ ...base(['hsm-1']), VAULT_PKCS11_PIN_FILE: groupOnly })).output).toMatch(
      /PIN file .*mode 0640/,
    );
  });

  it('refuses, in one line, an active master key the token lets out', async () => {
    const { code, output } = await refused(base(['hsm-loose']));
    expect(code).toBe(1);
    expect(output).toMatch(
      /^Token Vault cannot start: PKCS#11 key "hsm-loose" can be exported from the token \(CKA_EXTRACTABLE or not CKA_SENSITIVE\): .*keys:rotate-master --generate/,
    );
    expect(output.split('\n')).toHaveLength(1);
  });

  it('boots with an exportable older key listed only to re-wrap away from it, and warns about it', async () => {
    const output = await boots(base(['hsm-1', 'hsm-loose']));
    expect(output).toMatch(
      /"level":40.*PKCS#11 key \\"hsm-loose\\" can be exported.*keys:retire-master --id hsm-loose --destroy/,
    );
  });

  it('after keys:retire-master --destroy, says to drop the label, and boots once it is dropped', async () => {
    await boots(base(['hsm-1']));
    // The rotation the README describes: the new label first, --generate, then retire the old one.
    await cli(base(['hsm-2', 'hsm-1']), ['keys:rotate-master', '--generate']);
    const retired = await cli(base(['hsm-2', 'hsm-1']), ['keys:retire-master', '--id', 'hsm-1', '--destroy']);
    expect(retired).toMatch(
      /deleted from the HSM: remove "hsm-1" from VAULT_PKCS11_KEY_LABELS before the next restart/,
    );

    const { code, output } = await refused(base(['hsm-2', 'hsm-1']));
    expect(code).toBe(1);
    expect(output).toMatch(
      /^Token Vault cannot start: PKCS#11 token "vault-[0-9a-f]+" holds no AES key labelled "hsm-1" .*remove "hsm-1" from VAULT_PKCS11_KEY_LABELS and restart$/,
    );
    expect(output).not.toMatch(/--generate/);
    expect(output.split('\n')).toHaveLength(1);
    await boots(base(['hsm-2']));
  });
});
