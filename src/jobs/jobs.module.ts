import {
  Inject,
  Injectable,
  Logger,
  Module,
  OnApplicationBootstrap,
  OnApplicationShutdown,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { runDetached } from '../common/supervisor';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { TokensModule } from '../tokens/tokens.module';
import { InvitationsModule } from '../tenants/invitations/invitations.module';
import { InvitationExpiryService } from './invitation-expiry.service';
import { JobRunner } from './job-runner';
import { KeyCryptoperiodService } from './key-cryptoperiod.service';
import { MaintenanceService } from './maintenance.service';
import { PurgeService } from './purge.service';
import { ReactorsModule } from '../reactors/reactors.module';
import { POLL_MS as REACTOR_RUNS_POLL_MS, ReactorRunsService } from '../reactors/reactor-runs.service';
import { AuditJobsService } from './audit-jobs.service';
import { TenantsModule } from '../tenants/tenants.module';
import { MasterKeyring } from '../crypto/master-keyring.service';

/** One scheduled job: when it runs, and the one service method it awaits (which has its own test). */
interface ScheduledJob {
  name: string;
  /** A cron expression, a fixed interval, or once after boot. */
  when: { cron: string } | { everyMs: number } | { afterBootMs: number };
  /** Only on the embedded database (PostgreSQL has autovacuum). */
  embeddedOnly?: boolean;
  /** Needs the master keys: skipped, without a log line, while the vault is sealed (VAULT_SEALED). */
  needsKeys?: boolean;
  run: () => Promise<void>;
}

/**
 * Every scheduled job of the vault, in one table. Overlap and replica safety live in the services' use of
 * JobRunner.runExclusive; this only decides when. Off when JOBS_ENABLED=false (tests call the services).
 */
@Injectable()
export class JobScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Jobs');
  private readonly stops: (() => void)[] = [];

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
    private readonly purge: PurgeService,
    private readonly maintenance: MaintenanceService,
    private readonly invitationExpiry: InvitationExpiryService,
    private readonly cryptoperiods: KeyCryptoperiodService,
    private readonly registry: SchedulerRegistry,
    private readonly audit: AuditJobsService,
    private readonly master: MasterKeyring,
    private readonly reactorRuns: ReactorRunsService,
  ) {}

  jobs(): ScheduledJob[] {
    return [
      { name: 'purge', when: { cron: this.config.purgeCron }, run: () => this.purge.run() },
      {
        name: 'idempotency-purge',
        when: { cron: this.config.purgeCron },
        run: () => this.purge.runIdempotencyKeys(),
      },
      {
        name: 'reactor-results-purge',
        when: { cron: this.config.purgeCron },
        run: () => this.purge.runReactorResults(),
      },
      {
        name: 'tenant-purge',
        when: { cron: this.config.purgeCron },
        run: () => this.purge.runDeletedTenants(),
      },
      {
        name: 'invitation-expiry',
        when: { cron: this.config.purgeCron },
        run: async () => void (await this.invitationExpiry.run()),
      },
      {
        name: 'key-cryptoperiods',
        when: { cron: '0 7 * * * *' },
        needsKeys: true,
        run: async () => void (await this.cryptoperiods.run()),
      },
      {
        name: 'maintenance',
        when: { cron: '0 */10 * * * *' },
        embeddedOnly: true,
        run: () => this.maintenance.run(),
      },
      // Soon after boot, so a database restored or filled while the service was down gets statistics.
      {
        name: 'maintenance-after-boot',
        when: { afterBootMs: 30_000 },
        embeddedOnly: true,
        run: () => this.maintenance.run(),
      },
      {
        name: 'audit-seal',
        when: { everyMs: this.config.audit.sealIntervalMs },
        needsKeys: true,
        run: () => this.audit.seal(),
      },
      {
        name: 'audit-retention',
        when: { cron: '0 17 * * * *' },
        needsKeys: true,
        run: () => this.audit.deleteExpired(),
      },
      // Also on PostgreSQL: autovacuum may wait a minute or more after a bulk load.
      { name: 'maintenance-on-writes', when: { everyMs: 5_000 }, run: () => this.maintenance.runIfBusy() },
      // Reads stored signatures only: runs on a sealed vault too.
      { name: 'audit-checkpoint', when: { cron: '0 */10 * * * *' }, run: () => this.audit.logCheckpoints() },
      // Async react runs: at once after boot (runs left by a restart), then every 500 ms (kick never overlaps).
      {
        name: 'reactor-runs-after-boot',
        when: { afterBootMs: 0 },
        run: () => Promise.resolve(this.reactorRuns.kick()),
      },
      {
        name: 'reactor-runs-poll',
        when: { everyMs: REACTOR_RUNS_POLL_MS },
        run: () => Promise.resolve(this.reactorRuns.kick()),
      },
    ];
  }

  onApplicationBootstrap(): void {
    if (!this.config.jobsEnabled) {
      return;
    }
    for (const job of this.jobs()) {
      if (job.embeddedOnly === true && !this.database.embedded) {
        continue;
      }
      this.stops.push(this.schedule(job));
    }
  }

  onApplicationShutdown(): void {
    this.stops.splice(0).forEach((stop) => stop());
  }

  /** How many jobs are scheduled now (for tests). */
  get scheduled(): number {
    return this.stops.length;
  }

  /**
   * Registers the job with @nestjs/schedule's registry (visible to anything that lists scheduled work) and
   * returns how to remove it. A tick that fails, a database outage included, is one log line: the next tick
   * runs again, and the process never ends on it.
   */
  private schedule(job: ScheduledJob): () => void {
    const tick = (): void => {
      // The sealed state is the operator's choice, logged once by the keyring: nothing to report per tick.
      if (job.needsKeys !== true || !this.master.sealed) {
        runDetached(this.logger, `job ${job.name}`, job.run);
      }
    };
    if ('cron' in job.when) {
      const cron = CronJob.from({ cronTime: job.when.cron, onTick: tick, start: true });
      this.registry.addCronJob(job.name, cron);
      return () => this.unregister('cron', job.name);
    }
    if ('everyMs' in job.when) {
      this.registry.addInterval(job.name, setInterval(tick, job.when.everyMs).unref());
      return () => this.unregister('interval', job.name);
    }
    this.registry.addTimeout(job.name, setTimeout(tick, job.when.afterBootMs).unref());
    return () => this.unregister('timeout', job.name);
  }

  /** ScheduleModule may have cleared its registry on shutdown before this runs: remove only what is left. */
  private unregister(type: 'cron' | 'interval' | 'timeout', name: string): void {
    if (!this.registry.doesExist(type, name)) {
      return;
    }
    if (type === 'cron') {
      this.registry.deleteCronJob(name);
    } else if (type === 'interval') {
      this.registry.deleteInterval(name);
    } else {
      this.registry.deleteTimeout(name);
    }
  }
}

@Module({
  imports: [TokensModule, InvitationsModule, ReactorsModule, TenantsModule],
  providers: [
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
