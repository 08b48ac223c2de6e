/**
 * Waiting runs in one lane per tenant, served round-robin: a tenant with one run waiting is served before
 * another tenant's hundredth. Lanes keep the order of arrival within a tenant.
 */
export class FairQueue<T extends { tenant: string }> {
  /** Map iteration order is the turn order: a served lane moves to the back. */
  private readonly lanes = new Map<string, T[]>();
  private size = 0;

  get length(): number {
    return this.size;
  }

  /** Runs of this tenant waiting. */
  waiting(tenant: string): number {
    return this.lanes.get(tenant)?.length ?? 0;
  }

  push(job: T): void {
    const lane = this.lanes.get(job.tenant);
    if (lane === undefined) {
      this.lanes.set(job.tenant, [job]);
    } else {
      lane.push(job);
    }
    this.size++;
  }

  /** Takes a waiting job out of turn (its client went away); false when it was not waiting. */
  remove(job: T): boolean {
    const lane = this.lanes.get(job.tenant);
    const index = lane?.indexOf(job) ?? -1;
    if (lane === undefined || index < 0) {
      return false;
    }
    lane.splice(index, 1);
    if (lane.length === 0) {
      this.lanes.delete(job.tenant);
    }
    this.size--;
    return true;
  }

  /**
   * The next job in turn among tenants for which `eligible` holds; when none is, the next in turn of a
   * tenant that `mayOverflow` lets past its share (by default any, so a free worker never idles while work
   * waits); undefined when nobody may take it.
   */
  take(
    eligible: (tenant: string) => boolean,
    mayOverflow: (tenant: string) => boolean = () => true,
  ): T | undefined {
    for (const tenant of this.lanes.keys()) {
      if (eligible(tenant)) {
        return this.serve(tenant);
      }
    }
    for (const tenant of this.lanes.keys()) {
      if (mayOverflow(tenant)) {
        return this.serve(tenant);
      }
    }
    return undefined;
  }

  /** Empties the queue (shutdown), in no particular order. */
  drain(): T[] {
    const all = [...this.lanes.values()].flat();
    this.lanes.clear();
    this.size = 0;
    return all;
  }

  private serve(tenant: string): T {
    const lane = this.lanes.get(tenant) as T[];
    const job = lane.shift() as T;
    this.lanes.delete(tenant);
    if (lane.length > 0) {
      this.lanes.set(tenant, lane);
    }
    this.size--;
    return job;
  }
}
