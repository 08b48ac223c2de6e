import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pkcs11Config } from '../../src/config/key-custody-config';
import type * as Pkcs11 from 'pkcs11js';
import {
  acquirePkcs11Module,
  Pkcs11KeyProvider,
  releasePkcs11Module,
} from '../../src/crypto/pkcs11-key-provider';

export const SOFTHSM_LIBRARY = [
  '/usr/lib/softhsm/libsofthsm2.so',
  '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so',
].find((path) => existsSync(path));

/** Whether the pkcs11js binding is installed (an optional dependency, built where a compiler is). */
function bindingInstalled(): boolean {
  try {
    require.resolve('pkcs11js');
    return true;
  } catch {
    return false;
  }
}

/**
 * `describe` for the HSM tests. Without SoftHSM2 (or the pkcs11js binding) they are skipped with a notice,
 * as the browser tests are without Chromium, so a newcomer's `npm test` does not end red for a missing system
 * package; with CI=true (.ci/run installs softhsm2) they must run.
 */
export const describeWithSoftHsm: jest.Describe = (() => {
  if ((SOFTHSM_LIBRARY !== undefined && bindingInstalled()) || process.env.CI === 'true') {
    return describe;
  }
  console.warn(
    'SKIPPED: the HSM tests need SoftHSM2 (apt-get install softhsm2) and the pkcs11js binding (a C++ ' +
      'compiler at npm install). Install them to run these tests; with CI=true they fail instead.',
  );
  return describe.skip;
})();

/**
 * A SoftHSM2 token of its own in the run's token folder (SOFTHSM2_CONF, see softhsm-directory.ts), with a
 * user PIN in a file and AES keys made by the vault's own generator. Spawned servers get SOFTHSM2_CONF
 * through `env`.
 */
export class SoftHsm {
  readonly dir: string;
  readonly pinFile: string;
  readonly tokenLabel: string;
  readonly library: string;
  /** Made by test/support/global-setup.ts (softhsm-directory.ts) for the whole run. */
  readonly conf: string;

  private constructor() {
    const conf = process.env.SOFTHSM2_CONF;
    if (SOFTHSM_LIBRARY === undefined || conf === undefined) {
      throw new Error('SoftHSM2 is not installed (apt-get install softhsm2; .ci/run installs it)');
    }
    this.library = SOFTHSM_LIBRARY;
    this.conf = conf;
    this.tokenLabel = `vault-${randomBytes(4).toString('hex')}`;
    this.dir = mkdtempSync(join(tmpdir(), 'tv-hsm-pin-'));
    this.pinFile = join(this.dir, 'pin');
    writeFileSync(this.pinFile, `${this.pin}\n`, { mode: 0o600 });
    execFileSync(
      'softhsm2-util',
      ['--init-token', '--free', '--label', this.tokenLabel, '--so-pin', '87654321', '--pin', this.pin],
      { env: { ...process.env, SOFTHSM2_CONF: conf }, stdio: 'pipe' },
    );
  }

  /** Known to the tests only, to prove it never reaches a log. */
  readonly pin = '1357-2468';

  static create(...keyLabels: string[]): SoftHsm {
    const hsm = new SoftHsm();
    hsm.generate(...keyLabels);
    return hsm;
  }

  config(keyLabels: string[]): Pkcs11Config {
    return { library: this.library, tokenLabel: this.tokenLabel, pinFile: this.pinFile, keyLabels };
  }

  /** The vault's environment for this token; VAULT_MASTER_KEYS empty unless given. */
  env(keyLabels: string[], masterKeys = ''): Record<string, string> {
    return {
      SOFTHSM2_CONF: this.conf,
      VAULT_KEY_PROVIDER: 'pkcs11',
      VAULT_PKCS11_LIBRARY: this.library,
      VAULT_PKCS11_TOKEN_LABEL: this.tokenLabel,
      VAULT_PKCS11_PIN_FILE: this.pinFile,
      VAULT_PKCS11_KEY_LABELS: keyLabels.join(','),
      VAULT_MASTER_KEYS: masterKeys,
    };
  }

  generate(...labels: string[]): void {
    const provider = new Pkcs11KeyProvider(this.config(labels));
    try {
      for (const label of labels) {
        provider.generateKey(label, new Date('2026-01-01T00:00:00Z'));
      }
    } finally {
      provider.close();
    }
  }

  /** An AES key the token lets out (CKA_EXTRACTABLE true), as a vendor tool with careless options makes one. */
  generateExportable(label: string): void {
    // Loaded here: this file is imported where the optional binding may be missing (the tests then skip).
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const pkcs11js = require('pkcs11js') as typeof Pkcs11;
    const module = acquirePkcs11Module(this.library);
    try {
      const slot = module
        .C_GetSlotList(true)
        .find((s) => module.C_GetTokenInfo(s).label.trim() === this.tokenLabel);
      const session = module.C_OpenSession(slot!, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
      try {
        try {
          module.C_Login(session, pkcs11js.CKU_USER, this.pin);
        } catch (err) {
          if ((err as Pkcs11.Pkcs11Error).code !== pkcs11js.CKR_USER_ALREADY_LOGGED_IN) {
            throw err;
          }
        }
        module.C_GenerateKey(session, { mechanism: pkcs11js.CKM_AES_KEY_GEN }, [
          { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
          { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_AES },
          { type: pkcs11js.CKA_VALUE_LEN, value: 32 },
          { type: pkcs11js.CKA_LABEL, value: label },
          { type: pkcs11js.CKA_TOKEN, value: true },
          { type: pkcs11js.CKA_PRIVATE, value: true },
          { type: pkcs11js.CKA_SENSITIVE, value: true },
          { type: pkcs11js.CKA_EXTRACTABLE, value: true },
          { type: pkcs11js.CKA_ENCRYPT, value: true },
          { type: pkcs11js.CKA_DECRYPT, value: true },
        ]);
      } finally {
        module.C_CloseSession(session);
      }
    } finally {
      releasePkcs11Module(this.library);
    }
  }

  remove(): void {
    rmSync(this.dir, { recursive: true, force: true });
    execFileSync('softhsm2-util', ['--delete-token', '--token', this.tokenLabel], {
      env: { ...process.env, SOFTHSM2_CONF: this.conf },
      stdio: 'pipe',
    });
  }
}
