import { KeyRotation } from '../crypto/key-rotation.service';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { CliError, Command, out, parse, UsageError } from './kit';
import { withMasterKeys } from './sealed';
import { recordOperatorAction } from './operator-audit';

export const keysMigrateProvider: Command = {
  usage: 'keys:migrate-provider --to <env|pkcs11> [--batch <n>]',
  summary:
    'Re-wrap every tenant key with the master key of another provider (VAULT_KEY_PROVIDER=<target>, the ' +
    'source still configured so its keys open). Online, resumable, prints progress.',
  run: (args, config) => {
    const { values } = parse(args, { to: { type: 'string' }, batch: { type: 'string' } });
    const to = values.to;
    if (to !== 'env' && to !== 'pkcs11') {
      throw new UsageError('--to must be env or pkcs11');
    }
    const batch = values.batch === undefined ? 200 : Number(values.batch);
    if (!Number.isInteger(batch) || batch < 1 || batch > 10_000) {
      throw new UsageError('--batch must be an integer between 1 and 10000');
    }
    const custody = config.keyCustody;
    if (custody.provider !== to) {
      throw new CliError(
        `Set VAULT_KEY_PROVIDER=${to}: the target provider wraps, the other one only opens the old keys.`,
      );
    }
    const sourceConfigured = to === 'pkcs11' ? config.masterKeys !== null : custody.pkcs11 !== null;
    if (!sourceConfigured) {
      throw new CliError(
        to === 'pkcs11'
          ? 'Keep VAULT_MASTER_KEYS set during the migration: the keys wrapped with it must still open.'
          : 'Keep the VAULT_PKCS11_* settings during the migration: the keys wrapped in the HSM must still open.',
      );
    }
    return withMasterKeys(config, async (app) => {
      const rotation = app.get(KeyRotation);
      const moved = await rotation.rewrapUnderActiveMaster(batch, (done, total) =>
        out(`Re-wrapped ${done} of ${total} tenant key(s)...`),
      );
      const active = app.get(MasterKeyring).keyring.activeKeyId;
      await recordOperatorAction(
        app,
        'all',
        'migrate-provider',
        `Tenant keys re-wrapped under ${to} master key ${active} (operator CLI)`,
      );
      out(
        `Re-wrapped ${moved} tenant key(s) under ${to} master key ${active}. ` +
          "Remove the old provider's settings once every replica runs with the new one.",
      );
    });
  },
};
