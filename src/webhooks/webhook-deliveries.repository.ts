import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { BackoffOptions } from '../common/supervisor';
import { Database } from '../database/database.service';
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

/** The webhook outbox as a durable queue (Events writes it). */
@Injectable()
export class WebhookDeliveriesRepository {
  readonly queue: DurableQueue<ClaimedDelivery>;

  constructor(
    private readonly db: Database,
    clock: Clock,
  ) {
    this.queue = new DurableQueue(
      db,
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

  /** In the caller's transaction: the webhook's queued deliveries, given up with `cause`. */
  async giveUpForWebhook(tenantId: string, webhookId: string, cause: string): Promise<void> {
    await this.queue.giveUpWhere({ tenant_id: tenantId, webhook_id: webhookId }, cause);
  }
}
