import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

/** A delivery leased to this sender: attempt it, then settle it. */
export interface ClaimedDelivery {
  tenant_id: string;
  id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  payload: string;
  attempts: number;
  /** The span that published the event (with traces on), for the delivery span's link. */
  traceparent: string | null;
}

/**
 * Due deliveries, tenant by tenant: the tenants with a due delivery (a skip scan of the due index), then for
 * each its oldest due deliveries, no more than its free share (the per-tenant limit less its leases in
 * flight), then the least busy tenants first: a tenant with none in flight goes before one with three, and
 * every tenant's first turn before anyone's second. Leased in the same statement; rows another claim holds
 * are skipped.
 */
const CLAIM = `
WITH RECURSIVE due (tenant_id) AS (
    (SELECT tenant_id FROM webhook_deliveries
      WHERE status = 'pending' AND next_attempt_at <= $1
      ORDER BY tenant_id LIMIT 1)
  UNION ALL
    SELECT (SELECT w.tenant_id FROM webhook_deliveries w
             WHERE w.status = 'pending' AND w.next_attempt_at <= $1 AND w.tenant_id > due.tenant_id
             ORDER BY w.tenant_id LIMIT 1)
      FROM due WHERE due.tenant_id IS NOT NULL
), busy AS (
  SELECT tenant_id, count(*)::int AS leased FROM webhook_deliveries
   WHERE status = 'pending' AND leased_until IS NOT NULL AND leased_until > $1
   GROUP BY tenant_id
), picked AS (
  SELECT c.tenant_id, c.id
    FROM due
    LEFT JOIN busy ON busy.tenant_id = due.tenant_id
    CROSS JOIN LATERAL (
      SELECT w.tenant_id, w.id, w.next_attempt_at FROM webhook_deliveries w
       WHERE w.tenant_id = due.tenant_id AND w.status = 'pending' AND w.next_attempt_at <= $1
       ORDER BY w.next_attempt_at
       LIMIT greatest($4::int - coalesce(busy.leased, 0), 0)
         FOR UPDATE OF w SKIP LOCKED) c
   WHERE due.tenant_id IS NOT NULL
   ORDER BY coalesce(busy.leased, 0) + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.next_attempt_at),
            c.next_attempt_at
   LIMIT $3
)
UPDATE webhook_deliveries d
   SET attempts = d.attempts + 1, last_attempt_at = $1, next_attempt_at = $2, leased_until = $2
  FROM picked
 WHERE d.tenant_id = picked.tenant_id AND d.id = picked.id
RETURNING d.tenant_id, d.id, d.webhook_id, d.event_id, d.event_type, d.payload, d.attempts, d.traceparent`;

/** Claims run one at a time over every replica, so each sees the leases of the one before. */
const CLAIM_LOCK = "SELECT pg_advisory_xact_lock(hashtext('webhook-delivery-claim'))";

/** The outbox statements of the sender. */
@Injectable()
export class WebhookDeliveriesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * Leases up to `max` due deliveries until `leaseUntil` (their next attempt, should this sender die), at
   * most `perTenant` in flight per tenant counting the leases other senders hold.
   */
  async claim(now: Date, leaseUntil: Date, max: number, perTenant: number): Promise<ClaimedDelivery[]> {
    return this.dataSource.transaction(async (m) => {
      await m.query(CLAIM_LOCK);
      const result = await m.query<unknown[]>(CLAIM, [now, leaseUntil, max, perTenant]);
      // TypeORM answers [rows, count] for an UPDATE on PostgreSQL.
      return (Array.isArray(result[0]) ? result[0] : result) as ClaimedDelivery[];
    });
  }
}
