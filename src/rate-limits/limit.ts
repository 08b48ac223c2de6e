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
const MAX_LEASES = 100_000;
/** A lease is at most this share of the limit: what a replica may hold unused is 2 % of the limit. */
const LEASE_SHARE = 50;

/** Points a replica took from the shared store in one go and hands out itself until its window ends. */
interface Lease {
  points: number;
  /** What the store had left for everyone else when the lease was taken. */
  storeRemaining: number;
  until: number;
  /** The size of the next lease in this window: doubles with each refill, up to the limit's share. */
  next: number;
}

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
  private readonly leases = new Map<string, Lease>();
  private readonly refills = new Map<string, Promise<unknown>>();
  private readonly fallback: RateLimiterMemory;
  private readonly maxLease: number;

  constructor(
    readonly name: string,
    readonly policy: LimitPolicy,
    private readonly store: RateLimiterAbstract,
    private readonly onStoreFailure: StoreFailureListener,
  ) {
    this.fallback = new RateLimiterMemory({ points: policy.points, duration: policy.seconds });
    this.maxLease = Math.max(1, Math.floor(policy.points / LEASE_SHARE));
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
   *
   * Without `refund`, a busy key is counted in leases: one store round trip takes several points at once
   * (1, then doubling with each refill within the window, up to 2 % of the limit) and this replica hands
   * them out from memory. The store never grants more than the limit, so the limit holds across replicas;
   * what a replica holds unused (at most 2 % of the limit each) is refused to the others until the window
   * ends. A caller at a low rate never holds more than one point, and is counted exactly.
   */
  async take(key: string, points = 1, refund = false): Promise<Usage> {
    for (;;) {
      const blocked = this.blockedMs(key);
      if (blocked > 0) {
        return this.usage(0, blocked, true);
      }
      if (refund || points > this.maxLease) {
        return this.takeFromStore(key, points, points, refund, false);
      }
      const now = Date.now();
      const lease = this.leases.get(key);
      if (lease !== undefined && lease.until > now && lease.points >= points) {
        lease.points -= points;
        return this.usage(lease.storeRemaining + lease.points, lease.until - now, false);
      }
      // One refill per key at a time: concurrent requests wait for it rather than each taking a lease.
      const refilling = this.refills.get(key);
      if (refilling !== undefined) {
        await refilling;
        continue;
      }
      const size = Math.max(points, lease !== undefined && lease.until > now ? lease.next : 1);
      const refill = this.takeFromStore(key, points, size, false, true);
      this.refills.set(key, refill);
      try {
        return await refill;
      } finally {
        this.refills.delete(key);
      }
    }
  }

  /** Takes `size` points from the store; `leasing`: keeps what is left over `points` as this key's lease. */
  private async takeFromStore(
    key: string,
    points: number,
    size: number,
    refund: boolean,
    leasing: boolean,
  ): Promise<Usage> {
    let res: RateLimiterRes;
    let exceeded = false;
    try {
      res = await this.consume(key, size);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) {
        throw err;
      }
      res = err;
      exceeded = true;
    }
    // A lease the store could not fill whole still gets what was left before it (the rest did not exist).
    const granted = exceeded
      ? Math.max(0, Math.min(size, this.policy.points - (res.consumedPoints - size)))
      : size;
    if (granted < points) {
      this.leases.delete(key);
      if (refund) {
        await this.store.reward(key, size).catch(() => undefined);
      } else {
        this.block(key, res.msBeforeNext);
      }
      return this.usage(res.remainingPoints, res.msBeforeNext, true);
    }
    if (leasing) {
      this.keepLease(key, granted - points, res);
    }
    return this.usage(res.remainingPoints + granted - points, res.msBeforeNext, false);
  }

  private keepLease(key: string, points: number, res: RateLimiterRes): void {
    if (this.leases.size >= MAX_LEASES) {
      this.leases.clear();
    }
    const previous = this.leases.get(key);
    const now = Date.now();
    const sameWindow = previous !== undefined && previous.until > now;
    this.leases.set(key, {
      points,
      storeRemaining: Math.max(0, res.remainingPoints),
      until: now + res.msBeforeNext,
      next: Math.min(this.maxLease, sameWindow ? previous.next * 2 : 2),
    });
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
