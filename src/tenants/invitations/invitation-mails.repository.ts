import { Injectable } from '@nestjs/common';
import { In } from 'typeorm';
import { Clock } from '../../common/clock';
import { BackoffOptions } from '../../common/supervisor';
import { Database } from '../../database/database.service';
import { DurableQueue } from '../../database/durable-queue';
import { InvitationMail } from './invitation-mail.entity';

/** Attempts before an e-mail is given up ("failed"); with the backoff below, about six hours of trying. */
export const MAX_MAIL_ATTEMPTS = 12;
export const MAIL_RETRY_BACKOFF: BackoffOptions = { initialMs: 30_000, maxMs: 3_600_000 };
/**
 * A claimed e-mail is not claimed again for this long: longer than one SMTP attempt can last (its connect,
 * greeting and socket timeouts), so only a claim left by a process that died mid-send is ever retried.
 */
export const MAIL_CLAIM_LEASE_MS = 5 * 60_000;

/** An outbox e-mail leased to this sender: attempt it, then settle it. */
export interface ClaimedMail {
  id: string;
  tenant_id: string;
  invitation_id: string;
  secret: Buffer | null;
  attempts: number;
}

/** An e-mail the invitation's transaction writes to the outbox, its link's secret sealed for the row. */
export interface OutboxMail {
  id: string;
  tenantId: string;
  invitationId: string;
  kind: InvitationMail['kind'];
  secret: Buffer;
}

/** A send counted by the throttle. */
export interface CountedSend {
  email: string;
  sent_at: Date;
}

/**
 * The invitation e-mails: the outbox (invitation_outbox) as a durable queue, and the log of sends the
 * throttle counts (invitation_mails).
 */
@Injectable()
export class InvitationMailsRepository {
  readonly queue: DurableQueue<ClaimedMail>;

  constructor(
    private readonly db: Database,
    clock: Clock,
  ) {
    this.queue = new DurableQueue(
      db,
      clock,
      {
        name: 'invitation-mail',
        table: 'invitation_outbox',
        key: ['id'],
        returning: ['tenant_id', 'invitation_id', 'secret'],
        doneAt: 'sent_at',
        leasedUntil: null,
        clearedWhenDone: ['secret'],
      },
      { maxAttempts: MAX_MAIL_ATTEMPTS, backoff: MAIL_RETRY_BACKOFF, leaseMs: MAIL_CLAIM_LEASE_MS },
    );
  }

  /** The invitation's e-mail, due `now`, in place of any earlier one. */
  async replace(mail: OutboxMail, now: Date): Promise<void> {
    const outbox = this.db.repository(InvitationMail);
    await outbox.delete({ tenantId: mail.tenantId, invitationId: mail.invitationId });
    await outbox.insert({
      ...mail,
      status: 'pending',
      attempts: 0,
      lastError: null,
      lastAttemptAt: null,
      nextAttemptAt: now,
      sentAt: null,
      createdAt: now,
    });
  }

  /** The outbox e-mails of these invitations of the tenant. */
  ofInvitations(tenantId: string, invitationIds: string[]): Promise<InvitationMail[]> {
    return this.db.repository(InvitationMail).find({ where: { tenantId, invitationId: In(invitationIds) } });
  }

  /** Until the transaction ends, other sends of the tenant wait here: they are counted one after another. */
  async lockTenantSends(tenantId: string): Promise<void> {
    await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`invitation-mails:${tenantId}`]);
  }

  /** Forgets the tenant's sends at or before `since`: they no longer count. */
  async forgetSendsUntil(tenantId: string, since: Date): Promise<void> {
    await this.db.execute('DELETE FROM invitation_mails WHERE tenant_id = $1 AND sent_at <= $2', [
      tenantId,
      since,
    ]);
  }

  /** The tenant's counted sends, oldest first. */
  sends(tenantId: string): Promise<CountedSend[]> {
    return this.db.query<CountedSend>(
      'SELECT email, sent_at FROM invitation_mails WHERE tenant_id = $1 ORDER BY sent_at, id',
      [tenantId],
    );
  }

  async countSend(tenantId: string, email: string, at: Date): Promise<void> {
    await this.db.execute('INSERT INTO invitation_mails (tenant_id, email, sent_at) VALUES ($1, $2, $3)', [
      tenantId,
      email,
      at,
    ]);
  }
}
