import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { TenantKey, TenantKeyKind } from './tenant-key.entity';

/**
 * What the tenant keys look like as a whole: master key usage (retirement), ages (cryptoperiods) and
 * newest versions (re-encryption).
 */
@Injectable()
export class KeyInventory {
  constructor(@InjectRepository(TenantKey) private readonly keys: Repository<TenantKey>) {}

  /** How many tenant keys each master key id wraps (retirement, metrics). */
  async usageByMasterKey(): Promise<Map<string, number>> {
    const rows: { master_key_id: string; count: string }[] = await this.keys.query(
      'SELECT master_key_id, count(*) AS count FROM tenant_keys GROUP BY master_key_id',
    );
    return new Map(rows.map((r) => [r.master_key_id, Number(r.count)]));
  }

  /** Tenants whose newest data key was created before `cutoff` (cryptoperiod: they get a new version). */
  async tenantsWithDataKeysBefore(cutoff: Date): Promise<string[]> {
    const rows: { tenant_id: string }[] = await this.keys.query(
      `SELECT tenant_id FROM tenant_keys WHERE kind = 'data' GROUP BY tenant_id HAVING max(created_at) < $1`,
      [cutoff],
    );
    return rows.map((r) => r.tenant_id);
  }

  /** Each tenant's newest data-key version: tokens sealed under an older one are re-encryption work. */
  async latestDataKeyVersions(): Promise<Map<string, number>> {
    const rows: { tenant_id: string; version: number }[] = await this.keys.query(
      `SELECT tenant_id, max(version) AS version FROM tenant_keys WHERE kind = 'data' GROUP BY tenant_id`,
    );
    return new Map(rows.map((r) => [r.tenant_id, Number(r.version)]));
  }

  /** Creation time of the oldest key still in use for new writes: data keys by newest version, HMAC keys. */
  async oldestActiveKeys(): Promise<{ kind: TenantKeyKind; createdAt: Date | null }[]> {
    const rows: { kind: TenantKeyKind; oldest: Date | string | null }[] = await this.keys.query(
      `SELECT kind, min(newest) AS oldest FROM (
         SELECT tenant_id, kind, max(created_at) AS newest FROM tenant_keys GROUP BY tenant_id, kind
       ) k GROUP BY kind`,
    );
    return rows.map((r) => ({ kind: r.kind, createdAt: r.oldest === null ? null : toDate(r.oldest) }));
  }
}

function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}
