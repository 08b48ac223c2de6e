import { Injectable } from '@nestjs/common';
import { TenantKeyKind } from './tenant-key.entity';
import { TenantKeysRepository } from './tenant-keys.repository';

/**
 * What the tenant keys look like as a whole: master key usage (retirement), ages (cryptoperiods) and
 * newest versions (re-encryption).
 */
@Injectable()
export class KeyInventory {
  constructor(private readonly keys: TenantKeysRepository) {}

  /** How many tenant keys each master key id wraps (retirement, metrics). */
  usageByMasterKey(): Promise<Map<string, number>> {
    return this.keys.usageByMasterKey();
  }

  /** Tenants whose newest data key was created before `cutoff` (cryptoperiod: they get a new version). */
  tenantsWithDataKeysBefore(cutoff: Date): Promise<string[]> {
    return this.keys.tenantsWithDataKeysBefore(cutoff);
  }

  /** Each tenant's newest data-key version: tokens sealed under an older one are re-encryption work. */
  latestDataKeyVersions(): Promise<Map<string, number>> {
    return this.keys.latestDataKeyVersions();
  }

  /** Creation time of the oldest key still in use for new writes: data keys by newest version, HMAC keys. */
  oldestActiveKeys(): Promise<{ kind: TenantKeyKind; createdAt: Date | null }[]> {
    return this.keys.oldestActiveKeys();
  }
}
