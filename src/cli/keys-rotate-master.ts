import { TenantKeysService } from '../crypto/tenant-keys.service';
import { CliError, Command, out, parse, withAppContext } from './kit';

export const keysRotateMaster: Command = {
  usage: 'keys:rotate-master',
  summary:
    'Re-wrap every tenant key under the first key of VAULT_MASTER_KEYS (list the old ones after it). Online, resumable.',
  run: (args, config) => {
    parse(args, {});
    if (config.masterKeys === null) {
      throw new CliError(
        'VAULT_MASTER_KEYS is not set: put the new master key first and the old ones after it.',
      );
    }
    return withAppContext(config, async (app) => {
      const moved = await app.get(TenantKeysService).rewrapUnderActiveMaster();
      out(
        `Re-wrapped ${moved} tenant key(s) under master key ${app.get(TenantKeysService).masterKeyring.activeKeyId}.`,
      );
    });
  },
};
