import { Injectable } from '@nestjs/common';
import { IsNull, LessThan } from 'typeorm';
import { Database } from '../database/database.service';
import { Tenant } from './tenant.entity';

/** Live tokens of one type, for the usage report. */
export interface TokenTypeUsage {
  type: string;
  count: number;
  last_created_at: Date | null;
  /** Created or changed since the start of the month. */
  active: number;
}

/** What a tenant's owner may change about it. */
export type TenantChanges = Partial<
  Pick<Tenant, 'name' | 'settings' | 'securityContactEmail' | 'modifiedBy' | 'modifiedAt'>
>;

@Injectable()
export class TenantsRepository {
  constructor(private readonly db: Database) {}

  /** Inside the bootstrap transaction: replicas that boot together wait here for one another. */
  async lockBootstrap(): Promise<void> {
    await this.db.query("SELECT pg_advisory_xact_lock(hashtext('token-vault:bootstrap'))");
  }

  async anyExists(): Promise<boolean> {
    return (await this.db.query('SELECT 1 FROM tenants LIMIT 1')).length > 0;
  }

  async insert(id: string, name: string, ownerId: string): Promise<Tenant> {
    const tenants = this.db.repository(Tenant);
    const tenant = tenants.create({ id, name, ownerId });
    await tenants.insert(tenant);
    return tenant;
  }

  /** The tenant unless it is deleted. */
  findLive(tenantId: string): Promise<Tenant | null> {
    return this.db.repository(Tenant).findOne({ where: { id: tenantId, deletedAt: IsNull() } });
  }

  /** The tenant's name, deleted or not. */
  async nameOf(tenantId: string): Promise<string> {
    return (await this.db.repository(Tenant).findOneByOrFail({ id: tenantId })).name;
  }

  async update(tenantId: string, changes: TenantChanges): Promise<void> {
    await this.db.repository(Tenant).update({ id: tenantId }, changes);
  }

  async markDeleted(tenantId: string, at: Date): Promise<void> {
    await this.db.repository(Tenant).update({ id: tenantId }, { deletedAt: at });
  }

  /** Removes the tenants deleted before `before`; their data goes with them (foreign keys cascade). */
  async purgeDeletedBefore(before: Date): Promise<number> {
    return (await this.db.repository(Tenant).delete({ deletedAt: LessThan(before) })).affected ?? 0;
  }

  /** The tenant's live tokens by type (a read of the tokens table for the tenant's own usage report). */
  tokenUsage(tenantId: string, now: Date, monthStart: Date): Promise<TokenTypeUsage[]> {
    return this.db.query<TokenTypeUsage>(
      `SELECT type, count(*)::int AS count, max(created_at) AS last_created_at,
         count(*) FILTER (WHERE greatest(created_at, coalesce(modified_at, created_at)) >= $3)::int AS active
       FROM tokens
       WHERE tenant_id = $1 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $2)
       GROUP BY type ORDER BY type`,
      [tenantId, now, monthStart],
    );
  }
}
