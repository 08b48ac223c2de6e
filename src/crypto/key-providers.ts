import { Logger } from '@nestjs/common';
import { statSync } from 'node:fs';
import { AppConfig } from '../config/app-config';
import { ChainedKeyProvider, EnvKeyProvider, MasterKeyProvider } from './master-key-provider';
import { loadOrCreateDevMasterKey, parseMasterKeys } from './master-keys';
import { Pkcs11Config } from '../config/key-custody-config';
import { KeyProviderError, Pkcs11KeyProvider } from './pkcs11-key-provider';

/**
 * Opens the token and refuses what the README forbids: a PIN file others may read, a missing key, an active
 * key that can leave the HSM. An older exportable key only warns: it is listed so that tenant keys can be
 * re-wrapped away from it (keys:rotate-master), which a refusal would make impossible.
 */
function openPkcs11(config: Pkcs11Config): Pkcs11KeyProvider {
  assertPinFilePrivate(config.pinFile);
  const provider = new Pkcs11KeyProvider(config);
  try {
    provider.assertKeysPresent();
    const exportable = provider.exportableKeys();
    if (exportable.includes(provider.activeKeyId)) {
      throw new KeyProviderError(
        `PKCS#11 key "${provider.activeKeyId}" can be exported from the token (CKA_EXTRACTABLE or not CKA_SENSITIVE): ` +
          'put a new label first in VAULT_PKCS11_KEY_LABELS and run `npm run cli -- keys:rotate-master --generate`',
      );
    }
    for (const label of exportable) {
      new Logger('Keyring').warn(
        `PKCS#11 key "${label}" can be exported from the token: once keys:rotate-master has moved every tenant ` +
          `key off it, destroy it (keys:retire-master --id ${label} --destroy)`,
      );
    }
  } catch (err) {
    provider.close();
    throw err;
  }
  return provider;
}

/** The PIN file must be the vault user's alone (README: mode 0600); its path is not repeated. */
function assertPinFilePrivate(file: string): void {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return; // Unreadable: the provider's own PIN-file error says so.
  }
  if ((mode & 0o077) !== 0) {
    throw new KeyProviderError(
      `PKCS#11: the PIN file (VAULT_PKCS11_PIN_FILE) is open to group or others (mode ${(mode & 0o777).toString(8).padStart(4, '0')}): ` +
        'make it readable by the vault user only (chmod 600) and restart',
    );
  }
}

export interface OpenedProviders {
  provider: ChainedKeyProvider;
  /** The env provider fell back to the development key file (and created it when `created`). */
  devKey: { created: boolean } | null;
}

/**
 * The configured provider (VAULT_KEY_PROVIDER) first; the other one after it when its settings are
 * there too, so tenant keys wrapped by either keep opening while keys:migrate-provider moves them.
 * With pkcs11 the development key file is never used.
 */
export function openKeyProviders(config: AppConfig): OpenedProviders {
  const custody = config.keyCustody;
  const opened: MasterKeyProvider[] = [];
  let devKey: OpenedProviders['devKey'] = null;
  try {
    if (custody.provider === 'pkcs11' && custody.pkcs11 !== null) {
      opened.push(openPkcs11(custody.pkcs11));
      if (config.masterKeys !== null) {
        opened.push(new EnvKeyProvider(parseMasterKeys(config.masterKeys)));
      }
    } else {
      if (config.masterKeys !== null) {
        opened.push(new EnvKeyProvider(parseMasterKeys(config.masterKeys)));
      } else {
        const { keys, created } = loadOrCreateDevMasterKey(config.dataDir);
        opened.push(new EnvKeyProvider(keys));
        devKey = { created };
      }
      if (custody.pkcs11 !== null) {
        opened.push(openPkcs11(custody.pkcs11));
      }
    }
    return { provider: new ChainedKeyProvider(opened), devKey };
  } catch (err) {
    opened.forEach((p) => p.close());
    throw err;
  }
}
