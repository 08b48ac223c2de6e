import { Clock } from '../common/clock';
import { Database } from './database.service';

/**
 * A claim-once queue's table: `tenant_id`, `id`, `status` ('pending' while queued, `claimedStatus` while a
 * worker holds the item, then what the worker settled it as) and the columns named here.
 */
export interface ClaimOnceTable {
  table: string;
  /** What a claim returns besides `tenant_id` and `id`. */
  returning: readonly string[];
  /** The status a claim sets in place of a lease: an item in it is never claimed again. */
  claimedStatus: string;
  /** Stamped by the claim, cleared when the item is handed back. */
  claimedAt: string;
  /** The queue order within a tenant (the item's id breaks ties). */
  order: string;
  /** Stamped when the item is settled. */
  doneAt: string;
  /** What only a queued item needs (its sealed request): cleared once it is settled. */
  clearedWhenDone: readonly string[];
}

/** How many items each tenant may take in one claim: `known` by tenant id, `others` for any other tenant. */
export interface TenantAllowances {
  known: Record<string, number>;
  others: number;
}

export interface ClaimedOnce {
  tenant_id: string;
  id: string;
}

/**
 * DurableQueue's claim-once mode, for work that must run at most once: a claim sets the claimed status
 * instead of leasing the item and counts no attempt, so nothing comes back by itself. A worker settles its
 * item or hands it back untouched (`release`); an item whose worker died stays claimed until its owner
 * settles it (`claimedBefore`). Claims use `FOR UPDATE SKIP LOCKED`: two workers never claim the same item.
 */
export class ClaimOnceQueue<T extends ClaimedOnce> {
  private readonly returning: string;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly spec: ClaimOnceTable,
  ) {
    this.returning = ['tenant_id', 'id', ...spec.returning].map((column) => `r.${column}`).join(', ');
  }

  /**
   * Up to `limit` items, fair across tenants and workers: the next item is the one whose tenant would then
   * hold the fewest claimed items anywhere (its claimed items plus its place in its own queue), first in
   * queue order among equals, and no tenant takes more than its allowance. Rows another worker locked are
   * skipped.
   */
  async claimFair(limit: number, allowances: TenantAllowances): Promise<T[]> {
    const { table, claimedAt, order } = this.spec;
    return this.db.query<T>(
      `UPDATE ${table} r SET status = $5, ${claimedAt} = $1
       FROM (
         SELECT q.tenant_id, q.id FROM ${table} q
         JOIN (
           SELECT tenant_id, id, ${order},
             row_number() OVER (PARTITION BY tenant_id ORDER BY ${order}, id) AS turn
           FROM ${table} WHERE status = 'pending'
         ) k ON k.tenant_id = q.tenant_id AND k.id = q.id
         LEFT JOIN (
           SELECT tenant_id, count(*) AS n FROM ${table} WHERE status = $5 GROUP BY tenant_id
         ) busy ON busy.tenant_id = q.tenant_id
         WHERE q.status = 'pending' AND k.turn <= COALESCE(($3::jsonb ->> q.tenant_id::text)::int, $4)
         ORDER BY COALESCE(busy.n, 0) + k.turn, k.${order}, k.id
         LIMIT $2
         FOR UPDATE OF q SKIP LOCKED
       ) picked
       WHERE r.tenant_id = picked.tenant_id AND r.id = picked.id
       RETURNING ${this.returning}`,
      [this.clock.now(), limit, JSON.stringify(allowances.known), allowances.others, this.spec.claimedStatus],
    );
  }

  /** The worker could not start on the item (turned away before any of it ran): queued again. */
  async release(item: ClaimedOnce): Promise<void> {
    await this.db.execute(
      `UPDATE ${this.spec.table} SET status = 'pending', ${this.spec.claimedAt} = NULL
        WHERE tenant_id = $1 AND id = $2 AND status = $3`,
      [item.tenant_id, item.id, this.spec.claimedStatus],
    );
  }

  /** The item is done, as `status`, with `values` (column to value) written beside it. */
  async complete(item: ClaimedOnce, status: string, values: Record<string, unknown> = {}): Promise<void> {
    const { table, doneAt, clearedWhenDone } = this.spec;
    const columns = Object.keys(values);
    const sets = [
      'status = $3',
      `${doneAt} = $4`,
      ...clearedWhenDone.map((column) => `${column} = NULL`),
      ...columns.map((column, i) => `${column} = $${i + 6}`),
    ];
    await this.db.execute(
      `UPDATE ${table} SET ${sets.join(', ')} WHERE tenant_id = $1 AND id = $2 AND status = $5`,
      [item.tenant_id, item.id, status, this.clock.now(), this.spec.claimedStatus, ...Object.values(values)],
    );
  }

  /** Up to `limit` items claimed at or before `before` and still not settled (their worker may have died). */
  async claimedBefore(before: Date, limit: number): Promise<ClaimedOnce[]> {
    return this.db.query<ClaimedOnce>(
      `SELECT tenant_id, id FROM ${this.spec.table} WHERE status = $1 AND ${this.spec.claimedAt} <= $2 LIMIT $3`,
      [this.spec.claimedStatus, before, limit],
    );
  }
}
