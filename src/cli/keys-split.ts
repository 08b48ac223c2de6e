import { splitMasterKeys } from '../crypto/shamir';
import { UnsealShares } from '../crypto/unseal-shares.service';
import { CliError, Command, out, parse, UsageError, withAppContext } from './kit';

export const keysSplit: Command = {
  usage: 'keys:split --shares <n> --threshold <k>',
  summary:
    'Split VAULT_MASTER_KEYS into n Shamir shares, any k of which unseal a vault started with VAULT_SEALED=true ' +
    '(hand one share to each key holder, then remove VAULT_MASTER_KEYS from the environment). Records the ' +
    "split (a digest of each share, nothing of the key) in the database: the vault then takes only this split's " +
    'shares, and those of an earlier split no longer unseal.',
  async run(args, config) {
    const { values } = parse(args, { shares: { type: 'string' }, threshold: { type: 'string' } });
    if (config.masterKeys === null) {
      throw new CliError('VAULT_MASTER_KEYS is not set: it is what keys:split splits.');
    }
    const shares = Number(values.shares);
    let split: string[];
    try {
      split = await splitMasterKeys(config.masterKeys, shares, Number(values.threshold));
    } catch (err) {
      throw err instanceof RangeError ? new UsageError(`--shares and --threshold: ${err.message}`) : err;
    }
    // Booting checks that these master keys open the tenant keys: a split of wrong keys is never recorded.
    await withAppContext(config, (app) => app.get(UnsealShares).record(split));
    split.forEach((share, i) => out(`share ${i + 1} of ${shares}: ${share}`));
  },
};
