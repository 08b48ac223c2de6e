import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.service';
import { MasterKeyring } from './master-keyring.service';
import { randomKey } from './secrets';
import { keyContext, TenantKeyKind } from './tenant-key.entity';
import { TenantKeysRepository } from './tenant-keys.repository';
import { TenantKeysService } from './tenant-keys.service';

/**
 * Writes wrapped tenant keys: version 1 of a new tenant's keys, new data-key versions, and the re-wrap of
 * every key under a new master key.
 */
@Injectable()
export class KeyRotation {
  constructor(
    private readonly master: MasterKeyring,
    private readonly keys: TenantKeysRepository,
    private readonly db: Database,
    private readonly cache: TenantKeysService,
  ) {}

  /** Creates version 1 of the tenant's data and HMAC keys (in the tenant-creation transaction, when open). */
  async createTenantKeys(tenantId: string): Promise<void> {
    for (const kind of ['data', 'hmac'] as const) {
      await this.insertKey(tenantId, kind, 1);
    }
  }

  /** Adds a new data-key version for the tenant; new writes use it from now on. */
  async rotateDataKey(tenantId: string): Promise<number> {
    return this.db.transaction(async () => {
      await this.keys.lockTenant(tenantId);
      const latest = await this.keys.findNewestDataKey(tenantId);
      const version = (latest?.version ?? 0) + 1;
      await this.insertKey(tenantId, 'data', version);
      this.cache.forgetActiveVersion(tenantId);
      return version;
    });
  }

  /**
   * Re-wraps every tenant key not yet under the active master key, in batches. Each row is replaced only
   * if it is unchanged since it was read, so it is safe while the service runs and on several replicas,
   * and an interrupted run resumes where it stopped. Returns how many keys moved; `progress` hears after
   * each batch how many moved so far and how many were left at the start.
   */
  async rewrapUnderActiveMaster(
    batchSize = 200,
    progress?: (moved: number, total: number) => void,
  ): Promise<number> {
    const keyring = this.master.keyring;
    const active = keyring.activeKeyId;
    const total = await this.keys.countNotUnder(active);
    let moved = 0;
    for (;;) {
      const rows = await this.keys.findNotUnder(active, batchSize);
      if (rows.length === 0) {
        return moved;
      }
      for (const row of rows) {
        const context = keyContext(row.tenantId, row.kind, row.version);
        const plain = await keyring.unwrap(row.wrapped, context);
        const wrapped = await keyring.wrap(plain, context);
        plain.fill(0);
        moved += await this.keys.rewrap(row, wrapped, active);
      }
      progress?.(moved, total);
    }
  }

  private async insertKey(tenantId: string, kind: TenantKeyKind, version: number): Promise<void> {
    const keyring = this.master.keyring;
    const plain = randomKey();
    const wrapped = await keyring.wrap(plain, keyContext(tenantId, kind, version));
    plain.fill(0);
    await this.keys.insert({ tenantId, kind, version, masterKeyId: keyring.activeKeyId, wrapped });
  }
}
