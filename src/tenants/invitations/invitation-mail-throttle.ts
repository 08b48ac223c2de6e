import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/api-error';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { InvitationMailsRepository } from './invitation-mails.repository';

const HOUR_MS = 3600_000;

/**
 * Bounds invitation e-mails (create and resend) per address and per tenant in any hour, counted in the
 * database so every replica shares the count and a restart does not reset it. Keyed by address, not by
 * invitation, so deleting and inviting again does not start a fresh count.
 */
@Injectable()
export class InvitationMailThrottle {
  constructor(
    private readonly mails: InvitationMailsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Inside the caller's transaction: 429 (with Retry-After) when a limit is reached, otherwise the e-mail
   * is counted. The tenant's advisory lock makes concurrent sends of one tenant count one after another.
   */
  async take(tenantId: string, email: string, now: Date): Promise<void> {
    await this.mails.lockTenantSends(tenantId);
    await this.mails.forgetSendsUntil(tenantId, new Date(now.getTime() - HOUR_MS));
    const sent = await this.mails.sends(tenantId);
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
    await this.mails.countSend(tenantId, email, now);
  }
}

/** Seconds until enough of the sends (oldest first) leave the hour for one more to fit under `limit`. */
function retryAfter(sends: { sent_at: Date }[], limit: number, now: Date): number {
  const freeing = new Date(sends[sends.length - limit].sent_at).getTime();
  return (freeing + HOUR_MS - now.getTime()) / 1000;
}
