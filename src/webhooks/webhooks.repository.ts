import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { PageQueryDto, pageOffset } from '../common/pagination';
import { Database } from '../database/database.service';
import { Webhook } from './webhook.entity';

/** Webhooks, each of one tenant, with their run of failed deliveries; every method takes the tenant id first. */
@Injectable()
export class WebhooksRepository {
  constructor(private readonly db: Database) {}

  /**
   * In the caller's transaction: the tenant's creates wait for each other until it ends, so concurrent ones
   * count and insert one after another.
   */
  async lockCreates(tenantId: string): Promise<void> {
    await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`webhooks:${tenantId}`]);
  }

  count(tenantId: string): Promise<number> {
    return this.db.repository(Webhook).count({ where: { tenantId } });
  }

  async insert(row: QueryDeepPartialEntity<Webhook>): Promise<void> {
    await this.db.repository(Webhook).insert(row);
  }

  /** One page of the tenant's webhooks, newest first, and the count of all. */
  page(tenantId: string, query: PageQueryDto): Promise<[Webhook[], number]> {
    return this.db.repository(Webhook).findAndCount({
      where: { tenantId },
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: pageOffset(query),
      take: query.size,
    });
  }

  find(tenantId: string, id: string): Promise<Webhook | null> {
    return this.db.repository(Webhook).findOne({ where: { tenantId, id } });
  }

  /** False when the tenant has no such webhook. */
  async update(tenantId: string, id: string, fields: QueryDeepPartialEntity<Webhook>): Promise<boolean> {
    const result = await this.db.repository(Webhook).update({ tenantId, id }, fields);
    return (result.affected ?? 0) > 0;
  }

  /** False when the tenant has no such webhook. Its deliveries go with it (the foreign key cascades). */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db.repository(Webhook).delete({ tenantId, id });
    return (result.affected ?? 0) > 0;
  }

  /** A delivery went through: the webhook's run of failures ends. */
  async resetFailures(tenantId: string, id: string): Promise<void> {
    await this.db.execute(
      `UPDATE webhooks SET consecutive_failures = 0, failing_since = NULL
        WHERE tenant_id = $1 AND id = $2 AND consecutive_failures > 0`,
      [tenantId, id],
    );
  }

  /**
   * One more failure in the webhook's run, which disables it once the run is `failures` long and started at
   * or before `startedBy`. True when this call disabled it.
   */
  async countFailure(
    tenantId: string,
    id: string,
    now: Date,
    failures: number,
    startedBy: Date,
  ): Promise<boolean> {
    const rows = await this.db.query<{ status: string }>(
      `UPDATE webhooks
          SET consecutive_failures = consecutive_failures + 1,
              failing_since = coalesce(failing_since, $3),
              status = CASE WHEN consecutive_failures + 1 >= $4 AND coalesce(failing_since, $3) <= $5
                            THEN 'disabled' ELSE status END
        WHERE tenant_id = $1 AND id = $2 AND status = 'enabled'
        RETURNING status`,
      [tenantId, id, now, failures, startedBy],
    );
    return rows[0]?.status === 'disabled';
  }
}
