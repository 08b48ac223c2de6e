import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { TenantKeysService, UnsealStatus } from './tenant-keys.service';
import { recordSplit } from './unseal-splits';

/**
 * Unsealing as POST /unseal, the CLI and keys:split see it: the split record (unseal-splits.ts) and the
 * sealed keyring (TenantKeysService, which checks every share against the record before holding it).
 */
@Injectable()
export class UnsealShares {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly keys: TenantKeysService,
  ) {}

  /** Records a split keys:split just made; from now on only its shares unseal. */
  record(shares: string[]): Promise<{ id: string; threshold: number }> {
    return recordSplit(this.dataSource.manager, shares);
  }

  /** One key holder's share; 400 unless it is one of the recorded split's. */
  give(share: string): Promise<UnsealStatus> {
    return this.keys.unseal(share);
  }

  /** Drops every held share (unseal:reset); a share of the split is the credential. */
  reset(share: string): Promise<UnsealStatus> {
    return this.keys.resetUnseal(share);
  }
}
