import { Inject, Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { ApiError } from '../../common/api-error';
import { APP_CONFIG, AppConfig } from '../../config/app-config';

const HOUR_MS = 3600_000;

/**
 * Bounds invitation e-mails (create and resend) per address and per tenant in any hour, counted in the
 * database so every replica shares the count and a restart does not reset it. Keyed by address, not by
 * invitation, so deleting and inviting again does not start a fresh count.
 */
@Injectable()
export class InvitationMailThrottle {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /**
   * Inside the caller's transaction: 429 (with Retry-After) when a limit is reached, otherwise the e-mail
   * is counted. The tenant's advisory lock makes concurrent sends of one tenant count one after another.
   */
  async take(manager: EntityManager, tenantId: string, email: string, now: Date): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`invitation-mails:${tenantId}`]);
    const since = new Date(now.getTime() - HOUR_MS);
    await manager.query('DELETE FROM invitation_mails WHERE tenant_id = $1 AND sent_at <= $2', [
      tenantId,
      since,
    ]);
    const sent: { email: string; sent_at: Date }[] = await manager.query(
      'SELECT email, sent_at FROM invitation_mails WHERE tenant_id = $1 ORDER BY sent_at, id',
      [tenantId],
    );
    const toAddress = sent.filter((row) => row.email === email);
    const perAddress = this.config.invitationMailsPerAddressPerHour;
    if (toAddress.length >= perAddress) {
      throw ApiError.tooManyRequests(
        `At most ${perAddress} invitation e-mails to one address are sent per hour.`,
        retryAfter(toAddress, perAddress, now),
      );
    }
    const perTenant = this.config.invitationMailsPerTenantPerHour;
    if (sent.length >= perTenant) {
      throw ApiError.tooManyRequests(
        `At most ${perTenant} invitation e-mails per tenant are sent per hour.`,
        retryAfter(sent, perTenant, now),
      );
    }
    await manager.query('INSERT INTO invitation_mails (tenant_id, email, sent_at) VALUES ($1, $2, $3)', [
      tenantId,
      email,
      now,
    ]);
  }
}

/** Seconds until enough of the sends (oldest first) leave the hour for one more to fit under `limit`. */
function retryAfter(sends: { sent_at: Date }[], limit: number, now: Date): number {
  const freeing = new Date(sends[sends.length - limit].sent_at).getTime();
  return (freeing + HOUR_MS - now.getTime()) / 1000;
}
