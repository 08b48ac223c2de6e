import { Inject, Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import { ApplicationLookups } from '../../applications/application-lookups.service';
import { Clock } from '../../common/clock';
import { BackoffOptions, causeOf, waitAtMost } from '../../common/supervisor';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TenantCipher } from '../../crypto/tenant-cipher.service';
import { TenantsService } from '../tenants.service';
import { statusAt } from './invitation.entity';
import { invitationMail } from './invitation-mail';
import { ClaimedMail, InvitationMailsRepository } from './invitation-mails.repository';
import { InvitationsRepository } from './invitations.repository';
import { MAIL_SECRET_SEAL } from './invitation-outbox';
import { MailOutcome, Mailer, MailMessage } from '../../mail/mailer';

/**
 * How often pending e-mails are looked for (retries, and those left by a restart or another replica): the
 * jobs table's invitation-mail poll, on every replica.
 */
export const MAIL_POLL_MS = 15_000;
export const MAIL_POLL_BACKOFF: BackoffOptions = { initialMs: MAIL_POLL_MS, maxMs: 5 * 60_000 };
/** How long a create or resend waits for its e-mail before answering "pending". */
const REQUEST_WAIT_MS = 3_000;
export const SHUTDOWN_WAIT_MS = 5_000;

/** Why sending failed, safe to store and show: nodemailer's code and the SMTP reply code, never the text. */
export function mailFailureCause(err: unknown): string {
  const { code, responseCode } = (typeof err === 'object' && err !== null ? err : {}) as {
    code?: unknown;
    responseCode?: unknown;
  };
  const name = typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : causeOf(err);
  return typeof responseCode === 'number' && Number.isInteger(responseCode)
    ? `${name} ${responseCode}`
    : name;
}

/**
 * Delivers the invitation e-mails of the outbox, a durable queue: each is claimed, sent, then completed, or
 * its attempt failed (retried with backoff until MAX_MAIL_ATTEMPTS, then given up). The e-mail is rebuilt at
 * send time, so it always shows the current names. The secret goes once the e-mail is sent or given up.
 */
@Injectable()
export class InvitationMailSender implements OnModuleDestroy {
  private readonly logger = new Logger('InvitationMail');
  /** E-mails sent right after their request (sendSoon), awaited at shutdown. */
  private readonly inFlight = new Set<Promise<boolean>>();

  constructor(
    private readonly mails: InvitationMailsRepository,
    private readonly invitations: InvitationsRepository,
    private readonly tenants: TenantsService,
    private readonly cipher: TenantCipher,
    private readonly mailer: Mailer,
    private readonly applications: ApplicationLookups,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Before the database closes: attempts under way get a few seconds to record their outcome (the jobs
   * table gives its look the same). One stuck on an unreachable mail server does not hold up the shutdown:
   * its claim lapses and the e-mail is tried again.
   */
  async onModuleDestroy(): Promise<void> {
    await waitAtMost(Promise.all([...this.inFlight]), SHUTDOWN_WAIT_MS);
  }

  /**
   * Right after the transaction that queued e-mail `id` committed: tries it now, waiting at most
   * REQUEST_WAIT_MS, so the usual answer already says "sent"; a slower attempt finishes in the background.
   */
  async sendSoon(id: string): Promise<void> {
    await waitAtMost(
      this.track('invitation e-mail', () => this.deliver(id)),
      REQUEST_WAIT_MS,
    );
  }

  /**
   * One look: every due e-mail, claimed one at a time so each lease only has to outlast one SMTP attempt.
   * How many were attempted here.
   */
  async deliverDue(): Promise<number> {
    let attempted = 0;
    for (let row = await this.claim(null); row !== null; row = await this.claim(null)) {
      await this.attempt(row);
      attempted++;
    }
    return attempted;
  }

  private async deliver(id: string): Promise<void> {
    const row = await this.claim(id);
    if (row !== null) {
      await this.attempt(row);
    }
  }

  /** The oldest due e-mail (or e-mail `id` if due), leased to this process one at a time. */
  private async claim(id: string | null): Promise<ClaimedMail | null> {
    const [row] = await this.mails.queue.claim(1, id);
    return row ?? null;
  }

  private async attempt(row: ClaimedMail): Promise<void> {
    let message: MailMessage | string;
    try {
      message = await this.render(row);
    } catch (err) {
      // A database outage while reading: the claim lapses and a later look tries again.
      this.logger.warn(`invitation e-mail ${row.id} not rendered: ${causeOf(err)}`);
      return;
    }
    if (typeof message === 'string') {
      await this.mails.queue.giveUp(row, message);
      return;
    }
    let outcome: MailOutcome;
    try {
      outcome = await this.mailer.send(message);
    } catch (err) {
      const cause = mailFailureCause(err);
      const failed = await this.mails.queue.attemptFailed(row, cause);
      // Never the message or the address: the message holds the link.
      this.logger.warn(
        { invitation: row.invitation_id, attempts: row.attempts, cause },
        failed === 'failed'
          ? 'invitation e-mail failed; giving up'
          : 'invitation e-mail not sent; will retry',
      );
      return;
    }
    await this.mails.queue.complete(row, outcome);
  }

  /** The e-mail of a claimed row, or why it can no longer be sent. */
  private async render(row: ClaimedMail): Promise<MailMessage | string> {
    const invitation = await this.invitations.find(row.tenant_id, row.invitation_id);
    if (invitation === null || row.secret === null) {
      return 'GONE';
    }
    if (this.mails.queue.exhausted(row)) {
      return 'ABANDONED';
    }
    if (statusAt(invitation, this.clock.now()) === 'EXPIRED') {
      return 'EXPIRED';
    }
    const secret = (await this.cipher.openJson(
      MAIL_SECRET_SEAL,
      row.tenant_id,
      row.id,
      row.secret,
    )) as string;
    const inviter =
      invitation.createdBy === null
        ? null
        : await this.applications.findForTenant(invitation.tenantId, invitation.createdBy);
    return invitationMail({
      to: invitation.email,
      tenantName: await this.tenants.nameOf(row.tenant_id),
      inviter: inviter?.name ?? 'A member of the team',
      link: `${this.config.publicUrl}/invitations/accept?token=${secret}`,
      expiresAt: invitation.expiresAt,
    });
  }

  /** Runs `work`, logging a failure as one line; awaited at shutdown. Resolves to whether it succeeded. */
  private track(task: string, work: () => Promise<unknown>): Promise<boolean> {
    const running = work().then(
      () => true,
      (err: unknown) => {
        this.logger.warn(`${task} failed: ${causeOf(err)}`);
        return false;
      },
    );
    this.inFlight.add(running);
    return running.then((ok) => {
      this.inFlight.delete(running);
      return ok;
    });
  }
}
