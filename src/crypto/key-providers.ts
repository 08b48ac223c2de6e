import { AppConfig } from '../config/app-config';
import { ChainedKeyProvider, EnvKeyProvider, MasterKeyProvider } from './master-key-provider';
import { loadOrCreateDevMasterKey, parseMasterKeys } from './master-keys';
import { Pkcs11Config } from '../config/key-custody-config';
import { Pkcs11KeyProvider } from './pkcs11-key-provider';

function openPkcs11(config: Pkcs11Config): Pkcs11KeyProvider {
  const provider = new Pkcs11KeyProvider(config);
  try {
    provider.assertKeysPresent();
  } catch (err) {
    provider.close();
    throw err;
  }
  return provider;
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
