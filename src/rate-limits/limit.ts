import type { LimitPolicy } from '../config/rate-limit-config';
import { BlockSizer, Lease } from './lease';
import { Counter, WindowCount } from './limiter-store';

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

/** Reports a store failure (once per outage, by the caller's choice) before the limit counts in memory. */
export type StoreFailureListener = (limit: string, err: unknown) => void;

/**
 * One named limit over a fixed-window counter (limiter-store.ts). Keys found over the limit are remembered
 * in memory until their window ends, so a flood is refused without touching the store (and `blockedMs` can
 * be asked before any database lookup). A store failure never fails the request: the limit then counts
 * in this process (per replica), which still bounds every caller, and the failure is reported.
 *
 * On a shared store a key is counted in leased blocks (lease.ts): one addition takes a block, this replica
 * hands it out from memory, and takes the next block in the background once half of it is spent, so a
 * request within its allowance waits for no round trip. The store grants no point past the limit, so
 * across replicas at most the limit passes per window. A block left idle (`sweep`) or held at shutdown is
 * given back to the same window for the other replicas; what is held when the window ends lapses with it.
 */
export class Limit {
  private readonly blocked = new Map<string, number>();
  private readonly leases = new Map<string, Lease>();
  private readonly refills = new Map<string, Promise<Usage | null>>();
  private readonly fallback: Counter;
  private readonly blocks: BlockSizer;
  private readonly windowMs: number;

  constructor(
    readonly name: string,
    readonly policy: LimitPolicy,
    private readonly counter: Counter,
    fallback: Counter,
    private readonly onStoreFailure: StoreFailureListener,
  ) {
    this.fallback = fallback;
    this.blocks = new BlockSizer(policy.points);
    this.windowMs = policy.seconds * 1000;
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
   * work actually done counts, point by point; otherwise refused requests count too, as requests.
   */
  async take(key: string, points = 1, refund = false): Promise<Usage> {
    for (;;) {
      const blocked = this.blockedMs(key);
      if (blocked > 0) {
        return this.usage(0, blocked, true);
      }
      if (refund || !this.counter.shared || this.blocks.exact || points > this.blocks.max) {
        return this.direct(key, points, refund);
      }
      const now = Date.now();
      const lease = this.leases.get(key);
      if (lease !== undefined && lease.until > now && lease.points >= points) {
        lease.points -= points;
        lease.used += points;
        lease.lastUsed = now;
        if (lease.points < lease.refillBelow) {
          void this.refill(key, 0).catch(() => null);
        }
        return this.usage(this.policy.points - lease.count + lease.points, lease.until - now, false);
      }
      const usage = await this.refill(key, points);
      if (usage !== null) {
        return usage;
      }
    }
  }

  /**
   * Gives back to the store what leases idle for `idleMs` hold (all of them with 0, at shutdown), and
   * forgets leases whose window ended a window ago.
   */
  async sweep(idleMs: number, now = Date.now()): Promise<void> {
    const returns: Promise<void>[] = [];
    for (const [key, lease] of this.leases) {
      if (lease.until + this.windowMs <= now) {
        this.leases.delete(key);
      } else if (
        lease.points > 0 &&
        lease.until > now &&
        now - lease.lastUsed >= idleMs &&
        !this.refills.has(key)
      ) {
        const points = lease.points;
        lease.points = 0;
        lease.count -= points;
        lease.block = 1;
        returns.push(
          this.counter.giveBack(key, points, lease.until - now).catch((err: unknown) => {
            this.onStoreFailure(this.name, err);
          }),
        );
      }
    }
    await Promise.all(returns);
  }

  /**
   * One block addition per key at a time; a request that finds one under way waits for it and tries again
   * (null). `wanted` 0: a refill ahead of need, which refuses nothing.
   */
  private refill(key: string, wanted: number): Promise<Usage | null> {
    const running = this.refills.get(key);
    if (running !== undefined) {
      return running.then(() => null);
    }
    const refill = this.takeBlock(key, wanted).finally(() => this.refills.delete(key));
    this.refills.set(
      key,
      refill.catch(() => null),
    );
    return refill;
  }

  private async takeBlock(key: string, wanted: number): Promise<Usage | null> {
    const lease = this.leaseOf(key, Date.now());
    const size = this.blocks.next(lease, wanted);
    if (size === 0) {
      return null;
    }
    let after: WindowCount;
    try {
      after = await this.counter.add(key, size);
    } catch (err) {
      this.onStoreFailure(this.name, err);
      return wanted === 0 ? null : this.direct(key, wanted, false, this.fallback);
    }
    const granted = Math.max(0, Math.min(size, this.policy.points - (after.count - size)));
    const now = Date.now();
    const until = now + after.resetMs;
    if (Math.abs(lease.until - until) * 2 > this.windowMs) {
      // The store counts in another window than the held points came from: they lapsed with theirs.
      lease.points = 0;
      lease.used = 0;
    }
    lease.until = until;
    lease.count = after.count;
    lease.points += granted;
    lease.block = granted === size ? this.blocks.grown(size) : size;
    lease.refillBelow = Math.floor(granted / 2);
    if (wanted === 0) {
      return null;
    }
    const exceeded = lease.points < wanted;
    if (exceeded) {
      this.block(key, after.resetMs);
    } else {
      lease.points -= wanted;
      lease.used += wanted;
      lease.lastUsed = now;
    }
    return this.usage(this.policy.points - lease.count + lease.points, after.resetMs, exceeded);
  }

  /** The key's lease; past its window, renewed empty with a first block sized from the last window's use. */
  private leaseOf(key: string, now: number): Lease {
    const lease = this.leases.get(key);
    if (lease !== undefined && lease.until > now) {
      return lease;
    }
    const recent = lease !== undefined && lease.until + this.windowMs > now;
    const renewed: Lease = {
      points: 0,
      count: 0,
      until: 0,
      used: 0,
      block: recent ? this.blocks.carried(lease.used) : 1,
      refillBelow: 0,
      lastUsed: now,
    };
    if (this.leases.size >= MAX_LEASES) {
      // What the dropped leases held lapses with its window: fewer pass, never more.
      this.leases.clear();
    }
    this.leases.set(key, renewed);
    return renewed;
  }

  /** `points` counted in the store at once; a store failure counts them in this process instead. */
  private async direct(key: string, points: number, refund: boolean, counter = this.counter): Promise<Usage> {
    let after: WindowCount;
    try {
      after = await counter.add(key, points);
    } catch (err) {
      if (counter === this.fallback) {
        throw err;
      }
      this.onStoreFailure(this.name, err);
      return this.direct(key, points, refund, this.fallback);
    }
    const exceeded = after.count > this.policy.points;
    if (exceeded && refund) {
      await counter.giveBack(key, points, after.resetMs).catch(() => undefined);
    } else if (exceeded) {
      this.block(key, after.resetMs);
    }
    return this.usage(this.policy.points - after.count, after.resetMs, exceeded);
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
