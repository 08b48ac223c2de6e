import { Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Principal } from '../access/principal';
import { MetricsService } from '../metrics/metrics.service';
import { RateLimits } from '../rate-limits/rate-limits.service';

export type DedupOutcome = 'created' | 'deduplicated' | 'limited';

/**
 * Deduplicating writes per application: DEDUP_WRITES_PER_MINUTE in each minute, counted in the shared
 * rate-limit store so the bound holds across replicas, and deduplication cannot be driven as a fast
 * guessing oracle. A refused request takes nothing from the allowance; a request larger than the whole
 * allowance counts as the whole allowance. Outcomes are counted on /metrics.
 */
@Injectable()
export class DedupRateLimit {
  private readonly writes: Counter<'outcome'>;

  constructor(
    private readonly limits: RateLimits,
    metrics: MetricsService,
  ) {
    this.writes = new Counter({
      name: 'token_vault_deduplicating_writes_total',
      help: 'Tokens written with deduplicate_token: true, by outcome (created, deduplicated, limited)',
      labelNames: ['outcome'],
      registers: [metrics.registry],
    });
  }

  /** Takes `count` deduplicating writes from the caller's allowance, or throws 429 taking nothing. */
  async take(principal: Principal, count: number): Promise<void> {
    const limit = this.limits.dedupWrites;
    if (count === 0 || this.limits.dedupUnlimited) {
      return;
    }
    try {
      await this.limits.take(
        limit,
        principal.applicationId,
        null,
        Math.min(count, limit.policy.points),
        true,
      );
    } catch (err) {
      this.record('limited', count);
      throw err;
    }
  }

  record(outcome: DedupOutcome, count = 1): void {
    this.writes.inc({ outcome }, count);
  }
}
