import { recordOperatorAction } from './operator-audit';
import { Clock } from '../common/clock';
import { Pkcs11KeyProvider } from '../crypto/pkcs11-key-provider';
import { KeyRotation } from '../crypto/key-rotation.service';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { CliError, Command, out, parse } from './kit';
import { withMasterKeys } from './sealed';

export const keysRotateMaster: Command = {
  usage: 'keys:rotate-master [--generate]',
  summary:
    'Re-wrap every tenant key under the active master key: the first of VAULT_MASTER_KEYS, or with ' +
    'VAULT_KEY_PROVIDER=pkcs11 the first of VAULT_PKCS11_KEY_LABELS (--generate creates that key in the HSM ' +
    'first). List the old keys after it. Online, resumable.',
  run: (args, config) => {
    const { values } = parse(args, { generate: { type: 'boolean' } });
    const pkcs11 = config.keyCustody.provider === 'pkcs11' ? config.keyCustody.pkcs11 : null;
    if (pkcs11 === null && values.generate === true) {
      throw new CliError('--generate creates HSM keys: set VAULT_KEY_PROVIDER=pkcs11 and its settings.');
    }
    // Sealed: the key holders' shares give the master keys (a split of the new key first, the old after it).
    if (pkcs11 === null && config.masterKeys === null && !config.keyCustody.sealed) {
      throw new CliError(
        'VAULT_MASTER_KEYS is not set: put the new master key first and the old ones after it.',
      );
    }
    if (pkcs11 !== null && values.generate === true) {
      const provider = new Pkcs11KeyProvider(pkcs11);
      try {
        if (!provider.has(provider.activeKeyId)) {
          provider.generateKey(provider.activeKeyId, new Clock().now());
          out(`Created master key ${provider.activeKeyId} in the HSM (AES-256, not extractable).`);
        }
      } finally {
        provider.close();
      }
    }
    return withMasterKeys(config, async (app) => {
      const rotation = app.get(KeyRotation);
      const moved = await rotation.rewrapUnderActiveMaster();
      const active = app.get(MasterKeyring).keyring.activeKeyId;
      await recordOperatorAction(
        app,
        'all',
        'rotate-master',
        `Tenant keys re-wrapped under master key ${active} (operator CLI)`,
      );
      out(`Re-wrapped ${moved} tenant key(s) under master key ${active}.`);
    });
  },
};
