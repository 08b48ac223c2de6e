/** How recently another tenant must have had a run claimed here for a tenant's share to be enforced (as the sandbox). */
export const SHARE_WINDOW_MS = 30_000;

/** What the claim statement takes: per tenant, how many more runs it may start here now. */
export interface Allowances {
  /** Tenants this replica knows, each with its own allowance. */
  known: Record<string, number>;
  /** Any other tenant's allowance. */
  others: number;
}

/**
 * This replica's async-run slots, per tenant. A tenant may hold every slot while nobody else uses the
 * async worker; while another tenant has a run here, or had one claimed within SHARE_WINDOW_MS, it holds
 * at most `share` of them, so a slot stays free for the other tenant's next run instead of it waiting
 * behind a flood (the sandbox's own per-tenant rule, applied before a run is claimed from the queue).
 */
export class RunShares {
  private readonly running = new Map<string, number>();
  /** When each tenant last had a run claimed here. */
  private readonly lastClaimed = new Map<string, number>();

  constructor(
    private readonly share: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Runs this replica holds now, all tenants together. */
  get total(): number {
    let sum = 0;
    for (const n of this.running.values()) {
      sum += n;
    }
    return sum;
  }

  started(tenant: string): void {
    this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1);
    this.lastClaimed.set(tenant, this.now());
  }

  finished(tenant: string): void {
    const left = (this.running.get(tenant) ?? 0) - 1;
    if (left > 0) {
      this.running.set(tenant, left);
    } else {
      this.running.delete(tenant);
    }
  }

  /** Allowances for a claim of at most `room` runs. */
  allowances(room: number): Allowances {
    const active = this.activeTenants();
    const known: Record<string, number> = {};
    const othersActive = active.length > 1;
    for (const tenant of active) {
      known[tenant] = othersActive ? Math.max(0, this.share - (this.running.get(tenant) ?? 0)) : room;
    }
    // A tenant this replica has not served lately holds nothing here: its share while anyone else is active.
    return { known, others: active.length > 0 ? Math.min(this.share, room) : room };
  }

  /** Tenants with a run here now or claimed within the window; forgets the others. */
  private activeTenants(): string[] {
    const since = this.now() - SHARE_WINDOW_MS;
    for (const [tenant, at] of this.lastClaimed) {
      if (at < since && !this.running.has(tenant)) {
        this.lastClaimed.delete(tenant);
      }
    }
    return [...this.lastClaimed.keys()];
  }
}
