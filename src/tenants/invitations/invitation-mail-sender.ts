import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApplicationLookups } from '../../applications/application-lookups.service';
import { Clock } from '../../common/clock';
import { backoffDelay, BackoffOptions, causeOf, Poller, waitAtMost } from '../../common/supervisor';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { TenantCipher } from '../../crypto/tenant-cipher.service';
import { Tenant } from '../tenant.entity';
import { Invitation, statusAt } from './invitation.entity';
import { invitationMail } from './invitation-mail';
import { MAIL_SECRET_SEAL } from './invitation-outbox';
import { MailOutcome, Mailer, MailMessage } from '../../mail/mailer';

/** Attempts before an e-mail is given up ("failed"); with the backoff below, about six hours of trying. */
export const MAX_MAIL_ATTEMPTS = 12;
export const MAIL_RETRY_BACKOFF: BackoffOptions = { initialMs: 30_000, maxMs: 3_600_000 };
/**
 * A claimed e-mail is not claimed again for this long: longer than one SMTP attempt can last (its connect,
 * greeting and socket timeouts), so only a claim left by a process that died mid-send is ever retried.
 */
export const MAIL_CLAIM_LEASE_MS = 5 * 60_000;
/** How often pending e-mails are looked for (retries, and those left by a restart or another replica). */
export const MAIL_POLL_MS = 15_000;
const MAIL_POLL_BACKOFF: BackoffOptions = { initialMs: MAIL_POLL_MS, maxMs: 5 * 60_000 };
/** How long a create or resend waits for its e-mail before answering "pending". */
const REQUEST_WAIT_MS = 3_000;
const SHUTDOWN_WAIT_MS = 5_000;

interface Claimed {
  id: string;
  tenant_id: string;
  invitation_id: string;
  secret: Buffer | null;
  attempts: number;
}

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
 * Delivers the invitation e-mails of the outbox. Each is claimed by one statement that moves it out of reach
 * for a lease (`FOR UPDATE SKIP LOCKED`, so two replicas never claim the same row, and no transaction stays
 * open while SMTP talks), then sent, then marked sent, or retried with capped exponential backoff until
 * MAX_MAIL_ATTEMPTS, then failed. The e-mail is rebuilt at send time, so it always shows the current names.
 */
@Injectable()
export class InvitationMailSender implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('InvitationMail');
  /** E-mails sent right after their request (sendSoon), awaited at shutdown. */
  private readonly inFlight = new Set<Promise<boolean>>();
  private readonly poller = new Poller(
    this.logger,
    'invitation e-mail look',
    () => this.deliverDue(),
    MAIL_POLL_MS,
    MAIL_POLL_BACKOFF,
  );

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: TenantCipher,
    private readonly mailer: Mailer,
    private readonly applications: ApplicationLookups,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** With the scheduled jobs: a look at once (e-mails left by a restart), then every MAIL_POLL_MS. */
  onApplicationBootstrap(): void {
    if (this.config.jobsEnabled) {
      this.poller.start();
    }
  }

  /**
   * Before the database closes: no new look, and attempts under way get a few seconds to record their
   * outcome. One stuck on an unreachable mail server does not hold up the shutdown: its claim lapses and
   * the e-mail is tried again.
   */
  async onModuleDestroy(): Promise<void> {
    await Promise.all([
      this.poller.stop(SHUTDOWN_WAIT_MS),
      waitAtMost(Promise.all([...this.inFlight]), SHUTDOWN_WAIT_MS),
    ]);
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

  /** The oldest due e-mail (or e-mail `id` if due), counted as an attempt and leased to this process. */
  private async claim(id: string | null): Promise<Claimed | null> {
    const now = this.clock.now();
    // An UPDATE answers [rows, count] through TypeORM's PostgreSQL driver.
    const [rows] = await this.dataSource.query<[Claimed[], number]>(
      `UPDATE invitation_outbox o
          SET attempts = o.attempts + 1, last_attempt_at = $1, next_attempt_at = $2
        WHERE o.id IN (SELECT id FROM invitation_outbox
                        WHERE status = 'pending' AND next_attempt_at <= $1 AND ($3::uuid IS NULL OR id = $3)
                        ORDER BY next_attempt_at
                        LIMIT 1
                          FOR UPDATE SKIP LOCKED)
        RETURNING o.id, o.tenant_id, o.invitation_id, o.secret, o.attempts`,
      [now, new Date(now.getTime() + MAIL_CLAIM_LEASE_MS), id],
    );
    return rows[0] ?? null;
  }

  private async attempt(row: Claimed): Promise<void> {
    let message: MailMessage | string;
    try {
      message = await this.render(row);
    } catch (err) {
      // A database outage while reading: the claim lapses and a later look tries again.
      this.logger.warn(`invitation e-mail ${row.id} not rendered: ${causeOf(err)}`);
      return;
    }
    if (typeof message === 'string') {
      await this.settle(row, 'failed', message);
      return;
    }
    let outcome: MailOutcome;
    try {
      outcome = await this.mailer.send(message);
    } catch (err) {
      const cause = mailFailureCause(err);
      const final = row.attempts >= MAX_MAIL_ATTEMPTS;
      // Never the message or the address: the message holds the link.
      this.logger.warn(
        { invitation: row.invitation_id, attempts: row.attempts, cause },
        final ? 'invitation e-mail failed; giving up' : 'invitation e-mail not sent; will retry',
      );
      await this.settle(row, final ? 'failed' : 'pending', cause);
      return;
    }
    await this.settle(row, outcome, null);
  }

  /** The e-mail of a claimed row, or why it can no longer be sent. */
  private async render(row: Claimed): Promise<MailMessage | string> {
    const manager = this.dataSource.manager;
    const invitation = await manager.findOne(Invitation, {
      where: { tenantId: row.tenant_id, id: row.invitation_id },
    });
    if (invitation === null || row.secret === null) {
      return 'GONE';
    }
    if (row.attempts > MAX_MAIL_ATTEMPTS) {
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
    const tenant = await manager.findOneByOrFail(Tenant, { id: row.tenant_id });
    const inviter =
      invitation.createdBy === null
        ? null
        : await this.applications.findForTenant(invitation.tenantId, invitation.createdBy);
    return invitationMail({
      to: invitation.email,
      tenantName: tenant.name,
      inviter: inviter?.name ?? 'A member of the team',
      link: `${this.config.publicUrl}/invitations/accept?token=${secret}`,
      expiresAt: invitation.expiresAt,
    });
  }

  /** Records the outcome; the secret goes once the e-mail is sent or given up. A replaced row is left alone. */
  private async settle(
    row: Claimed,
    status: MailOutcome | 'pending' | 'failed',
    cause: string | null,
  ): Promise<void> {
    const now = this.clock.now();
    const retryAt = new Date(now.getTime() + backoffDelay(row.attempts - 1, MAIL_RETRY_BACKOFF));
    await this.dataSource.query(
      `UPDATE invitation_outbox
          SET status = $2, last_error = $3, next_attempt_at = $4,
              sent_at = CASE WHEN $2 IN ('sent', 'logged') THEN $5::timestamptz END,
              secret = CASE WHEN $2 = 'pending' THEN secret END
        WHERE id = $1 AND status = 'pending'`,
      [row.id, status, cause, status === 'pending' ? retryAt : now, now],
    );
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
