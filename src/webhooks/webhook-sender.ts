import { Inject, Injectable, Logger } from '@nestjs/common';
import { Counter } from 'prom-client';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/clock';
import { escapeHtml } from '../common/html';
import { causeOf } from '../common/supervisor';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Database } from '../database/database.service';
import { Mailer } from '../mail/mailer';
import { MetricsService } from '../metrics/metrics.service';
import { OutboundClient, OutboundError } from '../outbound';
import { inLinkedSpan, SpanHandle } from '../tracing/spans';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signatureHeader } from './webhook-signature';
import { Webhook } from './webhook.entity';
import { ClaimedDelivery, WebhookDeliveriesRepository } from './webhook-deliveries.repository';
import { WebhooksRepository } from './webhooks.repository';
import { WebhooksService } from './webhooks.service';

/** A webhook is disabled after this many failed attempts in a row, spread over at least DISABLE_AFTER_MS. */
export const DISABLE_AFTER_FAILURES = 10;
export const DISABLE_AFTER_MS = 3_600_000;
/** One attempt, from connecting through the TLS handshake to the receiver's whole answer: a slow one fails. */
export const DELIVERY_TIMEOUT_MS = 5_000;
/**
 * How often due deliveries are looked for, by every replica (a claim takes each one exactly once): the jobs
 * table's webhook-deliveries poll.
 */
export const DELIVERY_POLL_MS = 1_000;
/** At shutdown, how long the attempts under way get before their leases are left to lapse. */
export const SHUTDOWN_WAIT_MS = 5_000;
/** A receiver's answer is read (to reuse the connection) up to this size and otherwise ignored. */
const MAX_RESPONSE_BYTES = 64 * 1024;

export type DeliveryOutcome = 'delivered' | 'retry' | 'failed' | 'disabled';

/**
 * Delivers the webhook outbox, a durable queue (WebhookDeliveriesRepository): every replica polls and claims
 * due deliveries, each is POSTed through the outbound client (HTTPS only, the SSRF guard), signed with the
 * webhook's secret, then completed, or its attempt failed (retried with backoff, then given up). A webhook
 * whose deliveries keep failing is disabled and its pending deliveries dropped. Tenants share the senders:
 * each has at most WEBHOOK_TENANT_CONCURRENCY attempts in flight, the least busy tenants are claimed for
 * first, and a receiver has DELIVERY_TIMEOUT_MS to answer, so one tenant's dead receivers cannot stall
 * another's events.
 */
@Injectable()
export class WebhookSender {
  private readonly logger = new Logger('Webhooks');
  private readonly outcomes: Counter<'outcome'>;
  private stopping = false;

  constructor(
    private readonly db: Database,
    private readonly deliveries: WebhookDeliveriesRepository,
    private readonly webhookRows: WebhooksRepository,
    private readonly outbound: OutboundClient,
    private readonly webhooks: WebhooksService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly mailer: Mailer,
    metrics: MetricsService,
  ) {
    this.outcomes = new Counter({
      name: 'token_vault_webhook_deliveries_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, failed: given up, disabled: the webhook was disabled)',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
  }

  /** No new claim (shutdown); the look under way ends with its attempts, or their leases lapse. */
  stopClaiming(): void {
    this.stopping = true;
  }

  /**
   * One look: keeps up to WEBHOOK_CONCURRENCY attempts going, claiming again as each ends and at every
   * DELIVERY_POLL_MS meanwhile (so a delivery that falls due behind slow receivers waits for none of them),
   * until nothing is due or running. How many were attempted here.
   */
  async deliverDue(): Promise<number> {
    const running = new Set<Promise<void>>();
    let attempted = 0;
    for (;;) {
      let rows: ClaimedDelivery[] = [];
      const free = this.config.webhookConcurrency - running.size;
      if (!this.stopping && free > 0) {
        rows = await this.deliveries.queue
          .claimFair(free, this.config.webhookTenantConcurrency)
          .catch(async (err: unknown) => {
            await Promise.all(running);
            throw err;
          });
      }
      for (const row of rows) {
        const attempt: Promise<void> = inLinkedSpan('webhook deliver', row.traceparent, (span) =>
          this.attempt(row, span),
        )
          .catch((err: unknown) => {
            // Its lease lapses and a later look tries it again.
            this.logger.warn({ webhook: row.webhook_id, cause: causeOf(err) }, 'webhook attempt failed');
          })
          .finally(() => running.delete(attempt));
        running.add(attempt);
      }
      attempted += rows.length;
      if (running.size === 0) {
        return attempted;
      }
      if (rows.length === 0 || running.size >= this.config.webhookConcurrency) {
        await oneEndsOrTimeout(running, DELIVERY_POLL_MS);
      }
    }
  }

  /**
   * One attempt, one span, linked to the span that published the event: the POST's client span (whose
   * `traceparent` the receiver gets) and the statements are its children.
   */
  private async attempt(row: ClaimedDelivery, span: SpanHandle): Promise<void> {
    span.setAttribute('token_vault.webhook.id', row.webhook_id);
    span.setAttribute('token_vault.webhook.event_type', row.event_type);
    span.setAttribute('token_vault.webhook.attempt', row.attempts);
    const webhook = await this.webhookRows.find(row.tenant_id, row.webhook_id);
    if (webhook === null || webhook.status !== 'enabled') {
      await this.deliveries.queue.giveUp(row, 'WEBHOOK_DISABLED');
      return;
    }
    const { cause, reason } = await this.send(webhook, row);
    if (cause === null) {
      await this.deliveries.queue.complete(row, 'delivered');
      await this.webhookRows.resetFailures(row.tenant_id, row.webhook_id);
      this.outcomes.inc({ outcome: 'delivered' });
      span.setAttribute('token_vault.webhook.outcome', 'delivered');
      return;
    }
    const outcome = await this.deliveries.queue.attemptFailed(row, cause);
    this.logger.warn(
      { webhook: row.webhook_id, event: row.event_id, attempts: row.attempts, cause, reason },
      outcome === 'failed' ? 'webhook delivery failed; giving up' : 'webhook delivery failed; will retry',
    );
    this.outcomes.inc({ outcome });
    span.setAttribute('token_vault.webhook.outcome', outcome);
    span.fail();
    if (await this.countFailure(row, cause)) {
      this.outcomes.inc({ outcome: 'disabled' });
      this.logger.warn(
        { webhook: row.webhook_id },
        'webhook disabled after a sustained run of failed deliveries',
      );
      await this.noticeDisabled(webhook, cause);
    }
  }

  /**
   * When the disabled webhook names a `notify_email`, its owner is told by e-mail once: what was disabled,
   * the last failure's code, how to enable it again. The URL is not in the message (it may carry
   * credentials). A mail that cannot be sent is logged, not retried.
   */
  private async noticeDisabled(webhook: Webhook, cause: string): Promise<void> {
    if (webhook.notifyEmail === null) {
      return;
    }
    const lines = [
      `The webhook "${webhook.name}" (${webhook.id}) was disabled: its last ${DISABLE_AFTER_FAILURES}`,
      `deliveries failed (the last with ${cause}). Its pending events were dropped, and it receives no new`,
      'events until it is updated (PUT /webhooks/{id}), which enables it again.',
    ];
    try {
      await this.mailer.send({
        to: webhook.notifyEmail,
        subject: `Webhook disabled: ${webhook.name}`,
        text: lines.join('\n'),
        html: `<p>${lines.map(escapeHtml).join(' ')}</p>`,
      });
    } catch (err) {
      this.logger.error({ webhook: webhook.id, cause: causeOf(err) }, 'webhook disabled notice not sent');
    }
  }

  /**
   * POSTs the event; cause null when the receiver answered 2xx, else why not (a code, never a message or
   * URL), and for the log only what the code leaves out (a host name that does not resolve).
   */
  private async send(
    webhook: Webhook,
    row: ClaimedDelivery,
  ): Promise<{ cause: string | null; reason?: string }> {
    const timestamp = Math.floor(this.clock.now().getTime() / 1000);
    try {
      const secret = await this.webhooks.secretOf(webhook);
      const response = await this.outbound.requestBuffered(
        {
          method: 'POST',
          url: webhook.url,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'token-vault-webhooks',
            [EVENT_ID_HEADER]: row.event_id,
            [EVENT_TYPE_HEADER]: row.event_type,
            [SIGNATURE_HEADER]: signatureHeader(secret, timestamp, row.payload),
          },
          body: row.payload,
          timeoutMs: DELIVERY_TIMEOUT_MS,
        },
        MAX_RESPONSE_BYTES,
      );
      return { cause: response.status >= 200 && response.status < 300 ? null : `HTTP_${response.status}` };
    } catch (err) {
      return err instanceof OutboundError
        ? { cause: err.failure, reason: err.logReason }
        : { cause: causeOf(err) };
    }
  }

  /**
   * Counts a failed attempt against the webhook; disables it (dropping its pending deliveries) after a
   * sustained run of failures, with its audit record. True when this call disabled it.
   */
  private async countFailure(row: ClaimedDelivery, cause: string): Promise<boolean> {
    const now = this.clock.now();
    // One transaction: the webhook disabled, its pending deliveries dropped, and the vault's audit record.
    return this.db.transaction(async () => {
      const disabled = await this.webhookRows.countFailure(
        row.tenant_id,
        row.webhook_id,
        now,
        DISABLE_AFTER_FAILURES,
        new Date(now.getTime() - DISABLE_AFTER_MS),
      );
      if (!disabled) {
        return false;
      }
      await this.deliveries.giveUpForWebhook(row.tenant_id, row.webhook_id, 'WEBHOOK_DISABLED');
      await this.audit.record({
        tenantId: row.tenant_id,
        actor: null,
        entityType: 'webhook',
        entityId: row.webhook_id,
        operation: 'disable',
        message: `Webhook disabled after ${DISABLE_AFTER_FAILURES} failed deliveries in a row (last: ${cause})`,
      });
      return true;
    });
  }
}

/** Resolves when one of the promises settles (none rejects), or after `ms`. */
async function oneEndsOrTimeout(running: Set<Promise<void>>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const elapsed = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([...running, elapsed]);
  } finally {
    clearTimeout(timer);
  }
}
