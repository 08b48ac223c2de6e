import { isAbsolute } from 'node:path';

/** Where the master keys live (src/crypto/master-key-provider.ts) and how old keys may grow. */
export interface KeyCustodyConfig {
  /** Which provider wraps new tenant keys; the other one, when configured too, only unwraps. */
  provider: 'env' | 'pkcs11';
  pkcs11: Pkcs11Config | null;
  /** Master keys older than this fail the cryptoperiod check (metrics, readiness log); null: no limit. */
  masterKeyMaxAgeDays: number | null;
  /** Tenant data keys older than this get a new version from the scheduled job; null: no limit. */
  tenantKeyMaxAgeDays: number | null;
  /** Start sealed until `cli unseal` gives enough Shamir shares of the env master keys. */
  sealed: boolean;
  /**
   * CLI on a sealed deployment: files each holding one key holder's share (VAULT_UNSEAL_SHARE_FILES,
   * comma-separated absolute paths); empty: the CLI asks for the shares on standard input.
   */
  unsealShareFiles: string[];
}

export interface Pkcs11Config {
  /** The module, e.g. /usr/lib/softhsm/libsofthsm2.so. */
  library: string;
  /** The token, by label. */
  tokenLabel: string;
  /** A file holding the user PIN (its first line); the PIN itself is never in the environment. */
  pinFile: string;
  /** Labels of the AES-256 keys in the token, the active one first (as VAULT_MASTER_KEYS). */
  keyLabels: string[];
}

type Env = Record<string, string | undefined>;

export class KeyCustodyConfigError extends Error {}

const LABEL = /^[A-Za-z0-9_-]{1,32}$/;

function present(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function days(env: Env, name: string): number | null {
  const raw = present(env, name);
  if (raw === undefined) {
    return null;
  }
  if (!/^\d{1,5}$/.test(raw) || Number(raw) < 1) {
    throw new KeyCustodyConfigError(`${name} must be a number of days between 1 and 99999`);
  }
  return Number(raw);
}

function pkcs11(env: Env): Pkcs11Config | null {
  const library = present(env, 'VAULT_PKCS11_LIBRARY');
  if (library === undefined) {
    return null;
  }
  if (!isAbsolute(library)) {
    throw new KeyCustodyConfigError('VAULT_PKCS11_LIBRARY must be an absolute path');
  }
  const tokenLabel = present(env, 'VAULT_PKCS11_TOKEN_LABEL');
  const pinFile = present(env, 'VAULT_PKCS11_PIN_FILE');
  const labels = present(env, 'VAULT_PKCS11_KEY_LABELS');
  if (tokenLabel === undefined || pinFile === undefined || labels === undefined) {
    throw new KeyCustodyConfigError(
      'VAULT_PKCS11_LIBRARY needs VAULT_PKCS11_TOKEN_LABEL, VAULT_PKCS11_PIN_FILE and VAULT_PKCS11_KEY_LABELS',
    );
  }
  const keyLabels = labels.split(',').map((l) => l.trim());
  if (!keyLabels.every((l) => LABEL.test(l)) || new Set(keyLabels).size !== keyLabels.length) {
    throw new KeyCustodyConfigError(
      `VAULT_PKCS11_KEY_LABELS must be distinct comma-separated labels matching ${LABEL.source}`,
    );
  }
  return { library, tokenLabel, pinFile, keyLabels };
}

function shareFiles(env: Env): string[] {
  const files = (present(env, 'VAULT_UNSEAL_SHARE_FILES') ?? '').split(',').map((f) => f.trim());
  const listed = files.filter((f) => f !== '');
  if (!listed.every((f) => isAbsolute(f))) {
    throw new KeyCustodyConfigError('VAULT_UNSEAL_SHARE_FILES must be comma-separated absolute paths');
  }
  return listed;
}

export function loadKeyCustodyConfig(env: Env): KeyCustodyConfig {
  const provider = present(env, 'VAULT_KEY_PROVIDER') ?? 'env';
  if (provider !== 'env' && provider !== 'pkcs11') {
    throw new KeyCustodyConfigError('VAULT_KEY_PROVIDER must be one of env, pkcs11');
  }
  const config: KeyCustodyConfig = {
    provider,
    pkcs11: pkcs11(env),
    masterKeyMaxAgeDays: days(env, 'VAULT_MASTER_KEY_MAX_AGE_DAYS'),
    tenantKeyMaxAgeDays: days(env, 'VAULT_TENANT_KEY_MAX_AGE_DAYS'),
    sealed: ['true', '1', 'yes'].includes(present(env, 'VAULT_SEALED')?.toLowerCase() ?? 'false'),
    unsealShareFiles: shareFiles(env),
  };
  if (config.sealed && (provider !== 'env' || present(env, 'VAULT_MASTER_KEYS') !== undefined)) {
    throw new KeyCustodyConfigError(
      'VAULT_SEALED=true needs VAULT_KEY_PROVIDER=env and no VAULT_MASTER_KEYS: the unseal shares carry the keys',
    );
  }
  if (provider === 'pkcs11' && config.pkcs11 === null) {
    throw new KeyCustodyConfigError('VAULT_KEY_PROVIDER=pkcs11 needs VAULT_PKCS11_LIBRARY and its settings');
  }
  return config;
}
