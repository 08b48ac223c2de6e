import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { TokensService } from '../tokens/tokens.service';
import { MetricsService } from '../metrics/metrics.service';
import { IdempotencyStore } from '../idempotency/idempotency.store';
import { JobRunner } from './job-runner';

/**
 * The scheduled purges: expired tokens (their data goes, a tombstone stays, spec §3) and idempotency keys
 * past their 24 hours.
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
  ) {}

  async run(): Promise<void> {
    await this.jobs.runExclusive('purge', async () => {
      const purged = await this.tokens.purgeExpired(this.clock.now());
      this.metrics.purgedTokens.inc(purged);
      if (purged > 0) {
        this.logger.log({ purged }, 'expired tokens purged');
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
}
