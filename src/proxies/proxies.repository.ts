import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { IdAndNameQueryDto } from '../common/pagination';
import { findIdAndNamePage } from '../database/id-and-name-page';
import { Database } from '../database/database.service';
import { Proxy } from './proxy.entity';

/** Configured proxies, each of one tenant; every method but the look-up by key takes the tenant id first. */
@Injectable()
export class ProxiesRepository {
  constructor(private readonly db: Database) {}

  async insert(row: QueryDeepPartialEntity<Proxy>): Promise<void> {
    await this.db.repository(Proxy).insert(row);
  }

  /** One page of the tenant's proxies, newest first, and the count of all that match. */
  page(tenantId: string, query: IdAndNameQueryDto): Promise<[Proxy[], number]> {
    return findIdAndNamePage(this.db.repository(Proxy), tenantId, query);
  }

  find(tenantId: string, id: string): Promise<Proxy | null> {
    return this.db.repository(Proxy).findOne({ where: { tenantId, id } });
  }

  /** The proxy a /proxy request names by its key, in any tenant: the caller checks tenancy. */
  findByKeyHash(keyHash: string): Promise<Proxy | null> {
    return this.db.repository(Proxy).findOne({ where: { keyHash } });
  }

  async update(tenantId: string, id: string, fields: QueryDeepPartialEntity<Proxy>): Promise<void> {
    await this.db.repository(Proxy).update({ tenantId, id }, fields);
  }

  /** False when the tenant has no such proxy. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db.repository(Proxy).delete({ tenantId, id });
    return (result.affected ?? 0) > 0;
  }
}
