import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { TokensService } from '../tokens/tokens.service';
import { MetricsService } from '../metrics/metrics.service';
import { IdempotencyStore } from '../idempotency/idempotency.store';
import { JobRunner } from './job-runner';
import { ReactorRunsService } from '../reactors/reactor-runs.service';
import { TenantSelfService } from '../tenants/tenant-self.service';
import { TokenIntentsService } from '../token-intents/token-intents.service';
import { SessionsService } from '../sessions/sessions.service';
import { DocumentsService } from '../documents/documents.service';

/**
 * The scheduled purges: expired tokens (their data goes, a tombstone stays, spec §3) and idempotency keys
 * and asynchronous reactor results past their 24 hours, and document uploads a crash left unfinished.
 */
@Injectable()
export class PurgeService {
  private readonly logger = new Logger('Purge');

  constructor(
    private readonly tokens: TokensService,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly metrics: MetricsService,
    private readonly idempotencyKeys: IdempotencyStore,
    private readonly reactorRuns: ReactorRunsService,
    private readonly tenants: TenantSelfService,
    private readonly tokenIntents: TokenIntentsService,
    private readonly sessions: SessionsService,
    private readonly documents: DocumentsService,
  ) {}

  /** Tenants deleted longer ago than the grace period: removed with all they hold. */
  async runDeletedTenants(): Promise<void> {
    await this.jobs.runExclusive('tenant-purge', async () => {
      const purged = await this.tenants.purgeDeleted(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'deleted tenants purged');
      }
    });
  }

  async run(): Promise<void> {
    await this.jobs.runExclusive('purge', async () => {
      const purged = await this.tokens.purgeExpired(this.clock.now());
      this.metrics.purgedTokens.inc(purged);
      if (purged > 0) {
        this.logger.log({ purged }, 'expired tokens purged');
      }
    });
  }

  /** Token intents past their expiry (24 hours unless converted or deleted first). */
  async runTokenIntents(): Promise<void> {
    await this.jobs.runExclusive('token-intent-purge', async () => {
      const purged = await this.tokenIntents.purgeExpired(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'expired token intents purged');
      }
    });
  }

  /** Idempotency keys past their 24 hours: their stored answers go. */
  async runIdempotencyKeys(): Promise<void> {
    await this.jobs.runExclusive('idempotency-purge', async () => {
      const purged = await this.idempotencyKeys.purgeExpired(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'expired idempotency keys purged');
      }
    });
  }

  /** Asynchronous reactor results past their 24 hours. */
  async runReactorResults(): Promise<void> {
    await this.jobs.runExclusive('reactor-results-purge', async () => {
      const purged = await this.reactorRuns.purgeExpired(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'expired reactor results purged');
      }
    });
  }

  /** Sessions past their expiry (minutes after creation). */
  async runSessions(): Promise<void> {
    await this.jobs.runExclusive('session-purge', async () => {
      const purged = await this.sessions.purgeExpired(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'expired sessions purged');
      }
    });
  }

  /** Document uploads a process left unfinished (it ended mid-way): their row and chunks go. */
  async runStaleUploads(): Promise<void> {
    await this.jobs.runExclusive('document-uploads-purge', async () => {
      const purged = await this.documents.purgeStaleUploads(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'unfinished document uploads purged');
      }
    });
  }
}
