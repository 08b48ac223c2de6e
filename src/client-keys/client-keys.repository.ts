import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Database } from '../database/database.service';
import { ClientKey } from './client-key.entity';

/** Client encryption keys, each of one tenant; every method takes the tenant id first. */
@Injectable()
export class ClientKeysRepository {
  constructor(private readonly db: Database) {}

  /** In the caller's transaction: the tenant's creates count and insert one after another. */
  async lockCreates(tenantId: string): Promise<void> {
    await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`client-keys:${tenantId}`]);
  }

  count(tenantId: string): Promise<number> {
    return this.db.repository(ClientKey).count({ where: { tenantId } });
  }

  async insert(row: QueryDeepPartialEntity<ClientKey>): Promise<void> {
    await this.db.repository(ClientKey).insert(row);
  }

  /** Every key of the tenant, oldest first. */
  all(tenantId: string): Promise<ClientKey[]> {
    return this.db
      .repository(ClientKey)
      .find({ where: { tenantId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  find(tenantId: string, id: string): Promise<ClientKey | null> {
    return this.db.repository(ClientKey).findOne({ where: { tenantId, id } });
  }

  /** False when the tenant has no such key. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db.repository(ClientKey).delete({ tenantId, id });
    return (result.affected ?? 0) > 0;
  }
}
