import { Injectable, Logger } from '@nestjs/common';
import { ApiError } from '../common/api-error';
import { MasterKeyring } from './master-keyring.service';
import { ChainedKeyProvider, EnvKeyProvider } from './master-key-provider';
import { combineShares, ParsedShare } from './shamir';
import { TenantKeysRepository } from './tenant-keys.repository';
import { checkShare, recordSplit } from './unseal-splits';

/** What POST /unseal answers. */
export interface UnsealStatus {
  sealed: boolean;
  shares_received: number;
}

const unsealed = (): UnsealStatus => ({ sealed: false, shares_received: 0 });

/**
 * Unsealing as POST /unseal, the CLI and keys:split see it: the split record (unseal-splits.ts) and, while
 * the master keyring is sealed, the Shamir shares held so far, each checked against the record first.
 */
@Injectable()
export class UnsealShares {
  private readonly logger = new Logger('Keyring');
  /** The checked shares held while sealed, one per index, of the newest split only. */
  private held: ParsedShare[] = [];

  constructor(
    private readonly splits: TenantKeysRepository,
    private readonly master: MasterKeyring,
  ) {}

  /** Records a split keys:split just made; from now on only its shares unseal. */
  record(shares: string[]): Promise<{ id: string; threshold: number }> {
    return recordSplit(this.splits, shares);
  }

  /**
   * One key holder's share, refused at once (400) unless it is one of the recorded split's. At most
   * threshold - 1 wait; at the threshold they combine, and once the master keys open the tenant keys the
   * vault is unsealed. Keys that do not open them drop every share: the operators start again.
   */
  async give(text: string): Promise<UnsealStatus> {
    if (!this.master.sealed) {
      return unsealed();
    }
    const share = await checkShare(this.splits, text);
    if (!this.master.sealed) {
      return unsealed();
    }
    this.held = [...this.held.filter((s) => s.splitId === share.splitId && s.index !== share.index), share];
    if (this.held.length < share.threshold) {
      return { sealed: true, shares_received: this.held.length };
    }
    const keys = await combineShares(this.held.map((s) => s.text));
    const keyring = keys === null ? null : new ChainedKeyProvider([new EnvKeyProvider(keys)]);
    keys?.forEach((k) => k.key.fill(0));
    const problem = keyring === null ? 'the shares do not combine' : await this.master.problem(keyring);
    if (!this.master.sealed) {
      // Another request unsealed meanwhile.
      keyring?.close();
      return unsealed();
    }
    this.held = [];
    if (keyring === null || problem !== null) {
      this.logger.error(`Unseal: the shares give master keys that do not open the tenant keys: ${problem}`);
      throw new ApiError(
        409,
        'The shares combine into master keys that do not open the tenant keys: every share was dropped, start again.',
      );
    }
    this.master.load(keyring);
    return unsealed();
  }

  /** Drops every held share (unseal:reset), so an unseal starts again; a checked share proves a key holder asks. */
  async reset(text: string): Promise<UnsealStatus> {
    if (!this.master.sealed) {
      return unsealed();
    }
    await checkShare(this.splits, text);
    this.held = [];
    this.logger.warn('Unseal: every held share was dropped (unseal:reset).');
    return { sealed: true, shares_received: 0 };
  }
}
