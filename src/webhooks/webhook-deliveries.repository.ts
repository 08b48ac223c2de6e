import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { Clock } from '../common/clock';
import { BackoffOptions } from '../common/supervisor';
import { DurableQueue } from '../database/durable-queue';

/** Attempts of one delivery before it is given up; with the backoff below, about three hours of trying. */
export const MAX_DELIVERY_ATTEMPTS = 10;
export const DELIVERY_BACKOFF: BackoffOptions = { initialMs: 30_000, maxMs: 3_600_000 };
/** A claimed delivery is not claimed again for this long: only one whose sender died is ever sent twice. */
export const DELIVERY_LEASE_MS = 60_000;

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

/** The webhook outbox as a durable queue, and the webhook's run of failed deliveries. */
@Injectable()
export class WebhookDeliveriesRepository {
  readonly queue: DurableQueue<ClaimedDelivery>;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    clock: Clock,
  ) {
    this.queue = new DurableQueue(
      dataSource,
      clock,
      {
        name: 'webhook-delivery',
        table: 'webhook_deliveries',
        key: ['tenant_id', 'id'],
        returning: ['webhook_id', 'event_id', 'event_type', 'payload', 'traceparent'],
        doneAt: 'delivered_at',
        leasedUntil: 'leased_until',
        clearedWhenDone: [],
      },
      { maxAttempts: MAX_DELIVERY_ATTEMPTS, backoff: DELIVERY_BACKOFF, leaseMs: DELIVERY_LEASE_MS },
    );
  }

  /** A delivery went through: the webhook's run of failures ends. */
  async resetFailures(tenantId: string, webhookId: string): Promise<void> {
    await this.dataSource.query(
      `UPDATE webhooks SET consecutive_failures = 0, failing_since = NULL
        WHERE tenant_id = $1 AND id = $2 AND consecutive_failures > 0`,
      [tenantId, webhookId],
    );
  }

  /**
   * In the caller's transaction: one more failure in the webhook's run, which disables it once the run is
   * `failures` long and started at or before `startedBy`. True when this call disabled it.
   */
  async countFailure(
    manager: EntityManager,
    tenantId: string,
    webhookId: string,
    now: Date,
    failures: number,
    startedBy: Date,
  ): Promise<boolean> {
    const [rows] = await manager.query<[{ status: string }[], number]>(
      `UPDATE webhooks
          SET consecutive_failures = consecutive_failures + 1,
              failing_since = coalesce(failing_since, $3),
              status = CASE WHEN consecutive_failures + 1 >= $4 AND coalesce(failing_since, $3) <= $5
                            THEN 'disabled' ELSE status END
        WHERE tenant_id = $1 AND id = $2 AND status = 'enabled'
        RETURNING status`,
      [tenantId, webhookId, now, failures, startedBy],
    );
    return rows[0]?.status === 'disabled';
  }
}
