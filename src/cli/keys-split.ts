import { splitMasterKeys } from '../crypto/shamir';
import { CliError, Command, out, parse, UsageError } from './kit';

export const keysSplit: Command = {
  usage: 'keys:split --shares <n> --threshold <k>',
  summary:
    'Split VAULT_MASTER_KEYS into n Shamir shares, any k of which unseal a vault started with VAULT_SEALED=true ' +
    '(hand one share to each key holder, then remove VAULT_MASTER_KEYS from the environment).',
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
    split.forEach((share, i) => out(`share ${i + 1} of ${shares}: ${share}`));
  },
};
