import { Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ChangeFeed, PROBE_EVERY_MS } from '../database/change-feed';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { TokensModule } from '../tokens/tokens.module';
import { TokenIntentsModule } from '../token-intents/token-intents.module';
import { InvitationsModule } from '../tenants/invitations/invitations.module';
import {
  InvitationMailSender,
  MAIL_POLL_BACKOFF,
  MAIL_POLL_MS,
  SHUTDOWN_WAIT_MS as MAIL_SHUTDOWN_WAIT_MS,
} from '../tenants/invitations/invitation-mail-sender';
import { RateLimits, LEASE_IDLE_MS, PURGE_EVERY_MS } from '../rate-limits/rate-limits.service';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { DocumentsModule } from '../documents/documents.module';
import {
  DELIVERY_POLL_MS,
  SHUTDOWN_WAIT_MS as DELIVERY_SHUTDOWN_WAIT_MS,
  WebhookSender,
} from '../webhooks/webhook-sender';
import { InvitationExpiryService } from './invitation-expiry.service';
import { JobRunner } from './job-runner';
import { JobTimers, ScheduledJob, StopJob } from './job-timers';
import { JobsRepository } from './jobs.repository';
import { KeyCryptoperiodService } from './key-cryptoperiod.service';
import { MaintenanceService } from './maintenance.service';
import { PurgeService } from './purge.service';
import { ReactorsModule } from '../reactors/reactors.module';
import { POLL_MS as REACTOR_RUNS_POLL_MS, ReactorRunsService } from '../reactors/reactor-runs.service';
import { AuditJobsService } from './audit-jobs.service';
import { TenantsModule } from '../tenants/tenants.module';
import { MasterKeyring } from '../crypto/master-keyring.service';
import { SessionsModule } from '../sessions/sessions.module';

/**
 * Every scheduled job of the vault, in one table: what runs when, and on which replicas. Once-across-replicas
 * safety and overlap live in the services' use of JobRunner.runExclusive (`replicas: 'one'`); a poll never
 * overlaps itself. With JOBS_ENABLED=false (tests call the services) only the `always` jobs are scheduled:
 * they keep this replica's own machinery working.
 */
@Injectable()
export class JobScheduler implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Jobs');
  private readonly stops: StopJob[] = [];
  private readonly timers: JobTimers;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
    private readonly purge: PurgeService,
    private readonly maintenance: MaintenanceService,
    private readonly invitationExpiry: InvitationExpiryService,
    private readonly cryptoperiods: KeyCryptoperiodService,
    registry: SchedulerRegistry,
    private readonly audit: AuditJobsService,
    private readonly master: MasterKeyring,
    private readonly reactorRuns: ReactorRunsService,
    private readonly webhooks: WebhookSender,
    private readonly invitationMail: InvitationMailSender,
    private readonly rateLimits: RateLimits,
    private readonly feed: ChangeFeed,
  ) {
    // The sealed state is the operator's choice, logged once by the keyring: nothing to report per tick.
    this.timers = new JobTimers(registry, this.logger, (job) => job.needsKeys !== true || !master.sealed);
  }

  jobs(): ScheduledJob[] {
    const purgeCron = this.config.purgeCron;
    return [
      { name: 'purge', when: { cron: purgeCron }, replicas: 'one', run: () => this.purge.run() },
      {
        name: 'idempotency-purge',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.purge.runIdempotencyKeys(),
      },
      {
        name: 'reactor-results-purge',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.purge.runReactorResults(),
      },
      {
        name: 'document-uploads-purge',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.purge.runStaleUploads(),
      },
      {
        name: 'tenant-purge',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.purge.runDeletedTenants(),
      },
      {
        name: 'token-intent-purge',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.purge.runTokenIntents(),
      },
      {
        name: 'session-purge',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.purge.runSessions(),
      },
      {
        name: 'invitation-expiry',
        when: { cron: purgeCron },
        replicas: 'one',
        run: () => this.invitationExpiry.run(),
      },
      {
        name: 'key-cryptoperiods',
        when: { cron: '0 7 * * * *' },
        replicas: 'one',
        needsKeys: true,
        run: () => this.cryptoperiods.run(),
      },
      // PostgreSQL has autovacuum.
      {
        name: 'maintenance',
        when: { cron: '0 */10 * * * *' },
        replicas: 'one',
        onlyIf: this.database.embedded,
        run: () => this.maintenance.run(),
      },
      // Soon after boot, so a database restored or filled while the service was down gets statistics.
      {
        name: 'maintenance-after-boot',
        when: { afterBootMs: 30_000 },
        replicas: 'one',
        onlyIf: this.database.embedded,
        run: () => this.maintenance.run(),
      },
      {
        name: 'audit-seal',
        when: { everyMs: this.config.audit.sealIntervalMs },
        replicas: 'one',
        needsKeys: true,
        run: () => this.audit.seal(),
      },
      {
        name: 'audit-retention',
        when: { cron: '0 17 * * * *' },
        replicas: 'one',
        needsKeys: true,
        run: () => this.audit.deleteExpired(),
      },
      // Also on PostgreSQL: autovacuum may wait a minute or more after a bulk load.
      {
        name: 'maintenance-on-writes',
        when: { everyMs: 5_000 },
        replicas: 'one',
        run: () => this.maintenance.runIfBusy(),
      },
      // Reads stored signatures only: runs on a sealed vault too.
      {
        name: 'audit-checkpoint',
        when: { cron: '0 */10 * * * *' },
        replicas: 'one',
        run: () => this.audit.logCheckpoints(),
      },
      // Async react runs: at once after boot (runs left by a restart), then every 500 ms (kick never
      // overlaps); a submit also kicks once its transaction commits.
      {
        name: 'reactor-runs-after-boot',
        when: { afterBootMs: 0 },
        replicas: 'each',
        run: () => Promise.resolve(this.reactorRuns.kick()),
      },
      {
        name: 'reactor-runs-poll',
        when: { everyMs: REACTOR_RUNS_POLL_MS },
        replicas: 'each',
        run: () => Promise.resolve(this.reactorRuns.kick()),
      },
      // The outboxes: every replica looks, and a claim takes each delivery or e-mail once.
      {
        name: 'webhook-deliveries',
        when: { pollEveryMs: DELIVERY_POLL_MS },
        replicas: 'each',
        stopWaitMs: DELIVERY_SHUTDOWN_WAIT_MS,
        windDown: () => this.webhooks.stopClaiming(),
        run: () => this.webhooks.deliverDue(),
      },
      {
        name: 'invitation-mail',
        when: { pollEveryMs: MAIL_POLL_MS, backoff: MAIL_POLL_BACKOFF },
        replicas: 'each',
        stopWaitMs: MAIL_SHUTDOWN_WAIT_MS,
        run: () => this.invitationMail.deliverDue(),
      },
      // This replica's own: its leased rate-limit blocks, its change listener.
      {
        name: 'rate-limit-lease-sweep',
        when: { everyMs: LEASE_IDLE_MS },
        replicas: 'each',
        always: true,
        onlyIf: this.rateLimits.shared,
        run: () => this.rateLimits.sweepIdleLeases(),
      },
      // Every replica deletes expired counters, as the library's own timer would.
      {
        name: 'rate-limit-purge',
        when: { everyMs: PURGE_EVERY_MS },
        replicas: 'each',
        always: true,
        onlyIf: this.rateLimits.inDatabase,
        run: () => this.rateLimits.purgeExpired(),
      },
      {
        name: 'change-feed-probe',
        when: { everyMs: PROBE_EVERY_MS },
        replicas: 'each',
        always: true,
        onlyIf: !this.database.embedded,
        run: () => this.feed.probe(),
      },
    ];
  }

  onApplicationBootstrap(): void {
    for (const job of this.jobs()) {
      if (job.onlyIf !== false && (this.config.jobsEnabled || job.always === true)) {
        this.stops.push(this.timers.start(job));
      }
    }
  }

  /**
   * As shutdown begins (this module's hooks run before those of the modules it imports): no new tick or
   * look, and a look under way gets its wait while what it uses is still open.
   */
  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.stops.splice(0).map((stop) => stop()));
  }

  /** How many jobs are scheduled now (for tests). */
  get scheduled(): number {
    return this.stops.length;
  }
}

@Module({
  imports: [
    TokensModule,
    TokenIntentsModule,
    InvitationsModule,
    ReactorsModule,
    TenantsModule,
    WebhooksModule,
    SessionsModule,
    DocumentsModule,
  ],
  providers: [
    JobsRepository,
    JobRunner,
    PurgeService,
    MaintenanceService,
    InvitationExpiryService,
    AuditJobsService,
    KeyCryptoperiodService,
    JobScheduler,
  ],
  exports: [
    JobRunner,
    PurgeService,
    MaintenanceService,
    InvitationExpiryService,
    AuditJobsService,
    KeyCryptoperiodService,
  ],
})
export class JobsModule {}
