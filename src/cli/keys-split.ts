import { createInterface } from 'node:readline';
import { AppConfig } from '../config/app-config';
import { combineShares, splitMasterKeys } from '../crypto/shamir';
import { UnsealShares } from '../crypto/unseal-shares.service';
import { CliError, Command, out, parse, UsageError, withAppContext } from './kit';

export const keysSplit: Command = {
  usage: 'keys:split --shares <n> --threshold <k> [--from-shares]',
  summary:
    'Split VAULT_MASTER_KEYS into n Shamir shares, any k of which unseal a vault started with VAULT_SEALED=true ' +
    '(hand one share to each key holder, then remove VAULT_MASTER_KEYS from the environment). Records the ' +
    "split (a digest of each share, nothing of the key) in the database: the vault then takes only this split's " +
    'shares, and those of an earlier split no longer unseal. --from-shares: instead of VAULT_MASTER_KEYS, ' +
    'enough shares of an earlier split on standard input, one per line (how old tvs1 shares are replaced).',
  async run(args, config) {
    const { values } = parse(args, {
      shares: { type: 'string' },
      threshold: { type: 'string' },
      'from-shares': { type: 'boolean' },
    });
    const masterKeys = values['from-shares'] === true ? await keysFromShares(config) : config.masterKeys;
    if (masterKeys === null) {
      throw new CliError(
        'VAULT_MASTER_KEYS is not set: it is what keys:split splits (or give --from-shares).',
      );
    }
    const shares = Number(values.shares);
    let split: string[];
    try {
      split = await splitMasterKeys(masterKeys, shares, Number(values.threshold));
    } catch (err) {
      throw err instanceof RangeError ? new UsageError(`--shares and --threshold: ${err.message}`) : err;
    }
    // Booting checks that these master keys open the tenant keys: a split of wrong keys is never recorded.
    const keyed = { ...config, masterKeys, keyCustody: { ...config.keyCustody, sealed: false } };
    await withAppContext(keyed, (app) => app.get(UnsealShares).record(split));
    split.forEach((share, i) => out(`share ${i + 1} of ${shares}: ${share}`));
  },
};

/** The VAULT_MASTER_KEYS text from shares on standard input (either format), read until they combine. */
async function keysFromShares(config: AppConfig): Promise<string> {
  if (config.masterKeys !== null) {
    throw new UsageError('--from-shares takes the master keys from shares: unset VAULT_MASTER_KEYS');
  }
  const shares: string[] = [];
  for await (const line of createInterface({ input: process.stdin })) {
    const share = line.replace(/^share \d+ of \d+: /, '').trim();
    if (share === '') {
      continue;
    }
    shares.push(share);
    const keys = await combineShares(shares);
    if (keys !== null) {
      const text = keys.map((k) => `${k.id}:${k.key.toString('base64')}`).join(',');
      keys.forEach((k) => k.key.fill(0));
      return text;
    }
  }
  throw new CliError(
    `The ${shares.length} share(s) given do not combine into master keys: too few, or of different splits.`,
  );
}
