import { Injectable, Logger } from '@nestjs/common';
import { Clock } from '../common/clock';
import { TokensService } from '../tokens/tokens.service';

/** The scheduled purge: one await per run, and no overlapping runs in this process. */
@Injectable()
export class PurgeService {
  private readonly logger = new Logger('Purge');
  private running = false;

  constructor(
    private readonly tokens: TokensService,
    private readonly clock: Clock,
  ) {}

  async run(): Promise<void> {
    if (this.running) {
      return;
    }
    this.running = true;
    try {
      const purged = await this.tokens.purgeExpired(this.clock.now());
      if (purged > 0) {
        this.logger.log({ purged }, 'expired tokens purged');
      }
    } catch (err) {
      this.logger.error({ err: { type: err instanceof Error ? err.name : 'unknown' } }, 'purge failed');
    } finally {
      this.running = false;
    }
  }
}
