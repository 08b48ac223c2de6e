import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { Page, pageOf } from '../common/pagination';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { Database } from '../database/database.service';
import { checkDestinationUrl } from '../outbound';
import { CreatedWebhookDto, ListWebhooksQueryDto, WebhookBodyDto, WebhookDto } from './dto/webhook.dto';
import { generateWebhookSecret } from './webhook-signature';
import { Webhook } from './webhook.entity';
import { WebhooksRepository } from './webhooks.repository';

/** What the signing secret is sealed as, bound to the webhook (see TenantCipher). */
export const WEBHOOK_SECRET_SEAL = 'webhook-secret';
/** Each event fans out to every subscribed webhook of the tenant: a bound on that fan-out. */
export const MAX_WEBHOOKS_PER_TENANT = 25;

@Injectable()
export class WebhooksService {
  constructor(
    private readonly webhooks: WebhooksRepository,
    private readonly db: Database,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(principal: Principal, dto: WebhookBodyDto): Promise<CreatedWebhookDto> {
    const url = this.checkUrl(dto.url);
    const { tenantId } = principal;
    const id = randomUUID();
    const secret = generateWebhookSecret();
    const row: Partial<Webhook> = {
      tenantId,
      id,
      name: dto.name,
      url,
      notifyEmail: dto.notify_email ?? null,
      events: dto.events,
      status: 'enabled',
      secret: await this.cipher.sealJson(WEBHOOK_SECRET_SEAL, tenantId, id, secret),
      consecutiveFailures: 0,
      failingSince: null,
      createdBy: principal.applicationId,
      createdAt: this.clock.now(),
      modifiedBy: null,
      modifiedAt: null,
    };
    // The webhook and its audit record commit together: who can receive the tenant's events is audited.
    await this.db.transaction(async () => {
      // Creates of one tenant count and insert one after another, so concurrent ones cannot pass the cap.
      await this.webhooks.lockCreates(tenantId);
      if ((await this.webhooks.count(tenantId)) >= MAX_WEBHOOKS_PER_TENANT) {
        throw ApiError.unprocessable(`A tenant has at most ${MAX_WEBHOOKS_PER_TENANT} webhooks.`);
      }
      await this.webhooks.insert(row);
      await this.audit.record(auditEvent(principal, 'webhook', id, 'create', 'Webhook created'));
    });
    return { ...toDto(await this.find(tenantId, id)), secret };
  }

  async list(principal: Principal, query: ListWebhooksQueryDto): Promise<Page<WebhookDto>> {
    const [rows, total] = await this.webhooks.page(principal.tenantId, query);
    return pageOf(rows.map(toDto), total, query);
  }

  async get(principal: Principal, id: string): Promise<WebhookDto> {
    return toDto(await this.find(principal.tenantId, id));
  }

  /** Replaces the fields; enables a disabled webhook again (its failure count starts over). */
  async update(principal: Principal, id: string, dto: WebhookBodyDto): Promise<WebhookDto> {
    const url = this.checkUrl(dto.url);
    await this.db.transaction(async () => {
      const updated = await this.webhooks.update(principal.tenantId, id, {
        name: dto.name,
        url,
        notifyEmail: dto.notify_email ?? null,
        events: dto.events,
        status: 'enabled',
        consecutiveFailures: 0,
        failingSince: null,
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      });
      if (!updated) {
        throw ApiError.notFound('Webhook');
      }
      await this.audit.record(auditEvent(principal, 'webhook', id, 'update', 'Webhook updated'));
    });
    return this.get(principal, id);
  }

  /** Its pending deliveries go with it. */
  async delete(principal: Principal, id: string): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.webhooks.delete(principal.tenantId, id))) {
        throw ApiError.notFound('Webhook');
      }
      await this.audit.record(auditEvent(principal, 'webhook', id, 'delete', 'Webhook deleted'));
    });
  }

  /** The signing secret of a webhook, for the sender. */
  async secretOf(webhook: Webhook): Promise<string> {
    return (await this.cipher.openJson(
      WEBHOOK_SECRET_SEAL,
      webhook.tenantId,
      webhook.id,
      webhook.secret,
    )) as string;
  }

  private checkUrl(raw: string): string {
    const checked = checkDestinationUrl(raw, { allowLoopback: this.config.proxyAllowLoopback });
    if (!checked.ok) {
      throw ApiError.field('url', `The URL is not allowed: ${checked.reason}.`);
    }
    return checked.url.href;
  }

  private async find(tenantId: string, id: string): Promise<Webhook> {
    const webhook = await this.webhooks.find(tenantId, id);
    if (webhook === null) {
      throw ApiError.notFound('Webhook');
    }
    return webhook;
  }
}

function toDto(webhook: Webhook): WebhookDto {
  return {
    id: webhook.id,
    tenant_id: webhook.tenantId,
    status: webhook.status,
    name: webhook.name,
    url: webhook.url,
    notify_email: webhook.notifyEmail,
    events: webhook.events,
    created_by: webhook.createdBy,
    created_at: webhook.createdAt.toISOString(),
    modified_by: webhook.modifiedBy,
    modified_at: webhook.modifiedAt?.toISOString() ?? null,
  };
}
