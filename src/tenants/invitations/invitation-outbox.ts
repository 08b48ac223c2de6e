import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { TenantCipher } from '../../crypto/tenant-cipher.service';
import { InvitationDeliveryDto } from './dto/invitation.dto';
import { Invitation } from './invitation.entity';
import { InvitationMail } from './invitation-mail.entity';
import { InvitationMailsRepository } from './invitation-mails.repository';

/** What the secret of an outbox row is sealed as, bound to the row (see TenantCipher). */
export const MAIL_SECRET_SEAL = 'invitation-mail';

/** An e-mail about to be written to the outbox: its row id and the link's secret, sealed for that row. */
export interface QueuedMail {
  id: string;
  secret: Buffer;
}

/**
 * The outbox side of invitation e-mails: what the invitation's transaction writes, and the delivery status
 * the API shows. tenant_invitations keeps only the hash of the link's secret, so the secret itself waits
 * here until the e-mail is sent, sealed under the tenant's data key like every other secret at rest.
 */
@Injectable()
export class InvitationOutbox {
  constructor(
    private readonly mails: InvitationMailsRepository,
    private readonly cipher: TenantCipher,
  ) {}

  /** Before the transaction: the key lookup runs on a connection of its own. */
  async prepare(tenantId: string, secret: string): Promise<QueuedMail> {
    const id = randomUUID();
    return { id, secret: await this.cipher.sealJson(MAIL_SECRET_SEAL, tenantId, id, secret) };
  }

  /**
   * In the transaction that creates or resends `invitation`: its e-mail, due now, replaces any earlier
   * one, whose link no longer works.
   */
  async enqueue(
    invitation: Invitation,
    kind: InvitationMail['kind'],
    mail: QueuedMail,
    now: Date,
  ): Promise<void> {
    await this.mails.replace(
      { id: mail.id, tenantId: invitation.tenantId, invitationId: invitation.id, kind, secret: mail.secret },
      now,
    );
  }

  /** The delivery of each invitation's e-mail, by invitation id; none for invitations older than the outbox. */
  async deliveries(tenantId: string, invitationIds: string[]): Promise<Map<string, InvitationDeliveryDto>> {
    const rows = invitationIds.length === 0 ? [] : await this.mails.ofInvitations(tenantId, invitationIds);
    return new Map(rows.map((row) => [row.invitationId, toDeliveryDto(row)]));
  }
}

function toDeliveryDto(row: InvitationMail): InvitationDeliveryDto {
  return {
    status: row.status,
    attempts: row.attempts,
    last_attempt_at: row.lastAttemptAt?.toISOString() ?? null,
    last_error: row.lastError,
  };
}
