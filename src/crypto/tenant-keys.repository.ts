import { Injectable } from '@nestjs/common';
import { Not } from 'typeorm';
import { Database } from '../database/database.service';
import { TenantKey, TenantKeyKind } from './tenant-key.entity';

/** One tenant key per master key id that wraps any: what the boot check tries to open. */
export interface WrappedKeyRow {
  master_key_id: string;
  tenant_id: string;
  kind: TenantKeyKind;
  version: number;
  wrapped: string;
}

/** A split keys:split recorded: its threshold and the digest of each share, in index order. */
export interface UnsealSplitRow {
  id: string;
  threshold: number;
  share_digests: string[];
}

/**
 * The wrapped tenant keys (`tenant_keys`) and the unseal splits' record (`unseal_splits`). Every statement
 * runs in the open transaction, if any: on the embedded database (one connection) a read beside it would
 * wait for it forever.
 */
@Injectable()
export class TenantKeysRepository {
  constructor(private readonly db: Database) {}

  private get keys() {
    return this.db.repository(TenantKey);
  }

  find(tenantId: string, kind: TenantKeyKind, version: number): Promise<TenantKey | null> {
    return this.keys.findOne({ where: { tenantId, kind, version } });
  }

  /** The tenant's data key of the highest version. */
  findNewestDataKey(tenantId: string): Promise<TenantKey | null> {
    return this.keys.findOne({ where: { tenantId, kind: 'data' }, order: { version: 'DESC' } });
  }

  async insert(key: Omit<TenantKey, 'createdAt'>): Promise<void> {
    await this.keys.insert(key);
  }

  /** Serializes the tenant's key writes until the open transaction ends (two rotations, one version each). */
  async lockTenant(tenantId: string): Promise<void> {
    await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`tenant-keys:${tenantId}`]);
  }

  countNotUnder(masterKeyId: string): Promise<number> {
    return this.keys.count({ where: { masterKeyId: Not(masterKeyId) } });
  }

  /** Up to `limit` keys wrapped under another master key than `masterKeyId`, by tenant. */
  findNotUnder(masterKeyId: string, limit: number): Promise<TenantKey[]> {
    return this.keys.find({
      where: { masterKeyId: Not(masterKeyId) },
      order: { tenantId: 'ASC' },
      take: limit,
    });
  }

  /** Replaces a key's wrapping, only if it is still as `read` saw it; 1 when replaced, 0 otherwise. */
  async rewrap(read: TenantKey, wrapped: string, masterKeyId: string): Promise<number> {
    const { tenantId, kind, version } = read;
    const result = await this.keys.update(
      { tenantId, kind, version, wrapped: read.wrapped },
      { wrapped, masterKeyId },
    );
    return result.affected ?? 0;
  }

  /** False before the first migration (MIGRATIONS_RUN=false before `cli migrate`). */
  async tableExists(): Promise<boolean> {
    const [{ present }] = await this.db.query<{ present: boolean }>(
      "SELECT to_regclass('tenant_keys') IS NOT NULL AS present",
    );
    return present;
  }

  onePerMasterKey(): Promise<WrappedKeyRow[]> {
    return this.db.query<WrappedKeyRow>(
      'SELECT DISTINCT ON (master_key_id) master_key_id, tenant_id, kind, version, wrapped FROM tenant_keys ORDER BY master_key_id',
    );
  }

  /** How many tenant keys each master key id wraps (retirement, metrics). */
  async usageByMasterKey(): Promise<Map<string, number>> {
    const rows = await this.db.query<{ master_key_id: string; count: string }>(
      'SELECT master_key_id, count(*) AS count FROM tenant_keys GROUP BY master_key_id',
    );
    return new Map(rows.map((r) => [r.master_key_id, Number(r.count)]));
  }

  /** Tenants whose newest data key was created before `cutoff` (cryptoperiod: they get a new version). */
  async tenantsWithDataKeysBefore(cutoff: Date): Promise<string[]> {
    const rows = await this.db.query<{ tenant_id: string }>(
      `SELECT tenant_id FROM tenant_keys WHERE kind = 'data' GROUP BY tenant_id HAVING max(created_at) < $1`,
      [cutoff],
    );
    return rows.map((r) => r.tenant_id);
  }

  /** Each tenant's newest data-key version: tokens sealed under an older one are re-encryption work. */
  async latestDataKeyVersions(): Promise<Map<string, number>> {
    const rows = await this.db.query<{ tenant_id: string; version: number }>(
      `SELECT tenant_id, max(version) AS version FROM tenant_keys WHERE kind = 'data' GROUP BY tenant_id`,
    );
    return new Map(rows.map((r) => [r.tenant_id, Number(r.version)]));
  }

  /** Creation time of the oldest key still in use for new writes: data keys by newest version, HMAC keys. */
  async oldestActiveKeys(): Promise<{ kind: TenantKeyKind; createdAt: Date | null }[]> {
    const rows = await this.db.query<{ kind: TenantKeyKind; oldest: Date | string | null }>(
      `SELECT kind, min(newest) AS oldest FROM (
         SELECT tenant_id, kind, max(created_at) AS newest FROM tenant_keys GROUP BY tenant_id, kind
       ) k GROUP BY kind`,
    );
    return rows.map((r) => ({ kind: r.kind, createdAt: r.oldest === null ? null : toDate(r.oldest) }));
  }

  async insertSplit(id: string, threshold: number, shareDigests: string[]): Promise<void> {
    await this.db.execute(
      'INSERT INTO unseal_splits (id, threshold, share_digests) VALUES ($1, $2, $3::text[])',
      [id, threshold, shareDigests],
    );
  }

  /** The split recorded last; null when none is, or before the first migration. */
  async newestSplit(): Promise<UnsealSplitRow | null> {
    try {
      const rows = await this.db.query<UnsealSplitRow>(
        'SELECT id, threshold, share_digests FROM unseal_splits ORDER BY seq DESC LIMIT 1',
      );
      return rows[0] ?? null;
    } catch (err) {
      // Not migrated yet (42P01, undefined table): no split can be recorded.
      if ((err as { code?: string }).code === '42P01') {
        return null;
      }
      throw err;
    }
  }
}

function toDate(value: Date | string): Date {
  return value instanceof Date ? value : new Date(value);
}
