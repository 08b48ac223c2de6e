import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { LimitPolicy } from '../config/rate-limit-config';

/** Where a limit stands for one key after a request. */
export interface Usage {
  /** The limit's name, as it appears in RateLimit-Policy and on /metrics. */
  name: string;
  policy: LimitPolicy;
  remaining: number;
  /** Milliseconds until the window ends (and, when exceeded, until a retry can pass). */
  resetMs: number;
  exceeded: boolean;
}

const MAX_BLOCKED = 100_000;

/** Reports a store failure (once per outage, by the caller's choice) before the limit counts in memory. */
export type StoreFailureListener = (limit: string, err: unknown) => void;

/**
 * One named limit over a shared store (rate-limiter-flexible). Keys found over the limit are remembered in
 * memory until their window ends, so a flood is refused without touching the store (and `blockedMs` can
 * be asked before any database lookup). A store failure never fails the request: the limit then counts
 * in this process (per replica), which still bounds every caller, and the failure is reported.
 */
export class Limit {
  private readonly blocked = new Map<string, number>();
  private readonly fallback: RateLimiterMemory;

  constructor(
    readonly name: string,
    readonly policy: LimitPolicy,
    private readonly store: RateLimiterAbstract,
    private readonly onStoreFailure: StoreFailureListener,
  ) {
    this.fallback = new RateLimiterMemory({ points: policy.points, duration: policy.seconds });
  }

  /** In memory only: how long this key is still known to be over the limit (0: not known to be). */
  blockedMs(key: string, now = Date.now()): number {
    const until = this.blocked.get(key);
    if (until === undefined) {
      return 0;
    }
    if (until <= now) {
      this.blocked.delete(key);
      return 0;
    }
    return until - now;
  }

  /**
   * Counts `points` for `key`. `refund`: a refused take is given back (the caller did nothing), so only
   * work actually done counts; otherwise refused requests count too, as requests.
   */
  async take(key: string, points = 1, refund = false): Promise<Usage> {
    const blocked = this.blockedMs(key);
    if (blocked > 0) {
      return this.usage(0, blocked, true);
    }
    let res: RateLimiterRes;
    let exceeded = false;
    try {
      res = await this.consume(key, points);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        throw err;
      }
      res = err;
      exceeded = true;
    }
    if (exceeded) {
      if (refund) {
        await this.store.reward(key, points).catch(() => undefined);
      } else {
        this.block(key, res.msBeforeNext);
      }
    }
    return this.usage(res.remainingPoints, res.msBeforeNext, exceeded);
  }

  private async consume(key: string, points: number): Promise<RateLimiterRes> {
    try {
      return await this.store.consume(key, points);
    } catch (err) {
      if (err instanceof RateLimiterRes) {
        throw err;
      }
      this.onStoreFailure(this.name, err);
      return this.fallback.consume(key, points);
    }
  }

  private block(key: string, ms: number): void {
    if (ms <= 0) {
      return;
    }
    if (this.blocked.size >= MAX_BLOCKED) {
      this.blocked.clear();
    }
    this.blocked.set(key, Date.now() + ms);
  }

  private usage(remaining: number, resetMs: number, exceeded: boolean): Usage {
    return {
      name: this.name,
      policy: this.policy,
      remaining: Math.max(0, remaining),
      resetMs: Math.max(0, resetMs),
      exceeded,
    };
  }
}
