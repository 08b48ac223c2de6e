import { Pkcs11KeyProvider } from '../crypto/pkcs11-key-provider';
import { KeyInventory } from '../crypto/key-inventory.service';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { CliError, Command, out, parse } from './kit';
import { withMasterKeys } from './sealed';
import { recordOperatorAction } from './operator-audit';

export const keysRetireMaster: Command = {
  usage: 'keys:retire-master --id <master key id> [--destroy]',
  summary:
    'Check that no tenant key is wrapped with this master key any more (then drop it from the settings); ' +
    'with --destroy and the pkcs11 provider, also delete it from the HSM.',
  run: (args, config) => {
    const { values } = parse(args, { id: { type: 'string' }, destroy: { type: 'boolean' } });
    const id = typeof values.id === 'string' ? values.id : '';
    return withMasterKeys(config, async (app) => {
      if (app.get(MasterKeyring).keyring.activeKeyId === id) {
        throw new CliError(`Master key ${id} is the active one: rotate to another key first.`);
      }
      const inUse = (await app.get(KeyInventory).usageByMasterKey()).get(id) ?? 0;
      if (inUse > 0) {
        throw new CliError(
          `Master key ${id} still wraps ${inUse} tenant key(s): run keys:rotate-master (or keys:migrate-provider) first.`,
        );
      }
      const pkcs11 = config.keyCustody.pkcs11;
      if (values.destroy === true) {
        if (pkcs11 === null) {
          throw new CliError('--destroy deletes HSM keys: the pkcs11 provider is not configured.');
        }
        const provider = new Pkcs11KeyProvider({ ...pkcs11, keyLabels: [] });
        try {
          if (!provider.destroyKey(id)) {
            throw new CliError(`The HSM holds no key labelled ${id}.`);
          }
        } finally {
          provider.close();
        }
        await recordOperatorAction(
          app,
          'all',
          'retire-master',
          `Master key ${id} destroyed in the HSM (operator CLI)`,
        );
        out(
          `Master key ${id} wraps no tenant key and was deleted from the HSM: remove "${id}" from ` +
            'VAULT_PKCS11_KEY_LABELS before the next restart (a listed label the token lacks stops the boot).',
        );
        return;
      }
      out(`Master key ${id} wraps no tenant key: remove it from the settings.`);
    });
  },
};
