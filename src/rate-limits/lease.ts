/**
 * Points one replica took from the shared count of one key and hands out from memory. The store never grants
 * past the limit, so across replicas at most `limit` requests pass per window; what the replicas hold unused
 * is what the others may be refused, and a block is at most LEASE_SHARE-th of the limit and a
 * EXPECTED_REPLICAS-th of what the store had left, so a limit below LEASE_SHARE * 2 is counted point by point.
 */
export interface Lease {
  /** Points held, not yet handed out. */
  points: number;
  /** The shared count after this replica's last addition (its own held points included). */
  count: number;
  /** When the window of the held points ends (this process's clock). */
  until: number;
  /** Points handed out in that window: the next window's first block is sized from it. */
  used: number;
  /** The size of the next block. */
  block: number;
  /** Held points below which the next block is taken ahead of need: half the last block. */
  refillBelow: number;
  lastUsed: number;
}

/** A block is at most this share of the limit: a replica holds at most 2 % of it unused. */
export const LEASE_SHARE = 50;
/** A block takes at most this share of what the store has left, so replicas draining the last points share them. */
export const EXPECTED_REPLICAS = 4;

/** The block sizes of one limit. */
export class BlockSizer {
  readonly max: number;

  constructor(private readonly limit: number) {
    this.max = Math.max(1, Math.floor(limit / LEASE_SHARE));
  }

  /** Counted point by point: every take is one store addition, and nothing is ever held. */
  get exact(): boolean {
    return this.max === 1;
  }

  /** The block to take now: the lease's own size, no more than a fair share of what the store has left. */
  next(lease: Lease | undefined, wanted: number): number {
    const left = lease === undefined ? this.limit : this.limit - lease.count;
    const fair = Math.floor(left / EXPECTED_REPLICAS);
    return Math.max(wanted, Math.min(lease?.block ?? 1, fair, this.max));
  }

  /** After a block is taken in the same window: the next one doubles, so a busy key soon costs few trips. */
  grown(block: number): number {
    return Math.min(this.max, Math.max(1, block * 2));
  }

  /** A new window's first block: what the last window handed out, so a steady rate costs about two blocks. */
  carried(used: number): number {
    return Math.min(this.max, Math.max(1, used));
  }
}
