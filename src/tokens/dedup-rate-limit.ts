import { Inject, Injectable } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from '../metrics/metrics.service';

export type DedupOutcome = 'created' | 'deduplicated' | 'limited';

const MAX_TRACKED = 100_000;

/**
 * Deduplicating writes per application: a token bucket of DEDUP_WRITES_PER_MINUTE that refills evenly over
 * a minute, so deduplication cannot be driven as a fast guessing oracle. In process: each replica counts its
 * own (a shared limiter belongs with the general rate limits). Outcomes are counted on /metrics.
 */
@Injectable()
export class DedupRateLimit {
  private readonly buckets = new Map<string, { level: number; at: number }>();
  private readonly writes: Counter<'outcome'>;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly clock: Clock,
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
  take(principal: Principal, count: number): void {
    const perMinute = this.config.dedupWritesPerMinute;
    if (count === 0 || perMinute === 0) {
      return;
    }
    const now = this.clock.now().getTime();
    const perMs = perMinute / 60_000;
    const bucket = this.buckets.get(principal.applicationId);
    const level =
      bucket === undefined ? perMinute : Math.min(perMinute, bucket.level + (now - bucket.at) * perMs);
    // A request larger than the whole allowance passes on a full bucket and leaves it in debt.
    const needed = Math.min(count, perMinute);
    if (level < needed) {
      this.record('limited', count);
      const retryAfter = Math.max(1, Math.ceil((needed - level) / perMs / 1000));
      throw ApiError.tooManyRequests(
        `At most ${perMinute} deduplicating writes a minute per application.`,
        retryAfter,
      );
    }
    if (bucket === undefined && this.buckets.size >= MAX_TRACKED) {
      this.buckets.clear();
    }
    this.buckets.set(principal.applicationId, { level: level - count, at: now });
  }

  record(outcome: DedupOutcome, count = 1): void {
    this.writes.inc({ outcome }, count);
  }
}
