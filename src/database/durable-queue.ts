import { Clock } from '../common/clock';
import { backoffDelay, BackoffOptions } from '../common/supervisor';
import { Database } from './database.service';

/**
 * A queue's table. Besides the columns named here it has `status` ('pending' while queued, 'failed' once
 * given up, or a success status), `attempts`, `last_error`, `last_attempt_at` and `next_attempt_at`.
 */
export interface QueueTable {
  /** Names the claim's advisory lock (`<name>-claim`). */
  name: string;
  table: string;
  /** The primary key's columns; the last one is the item's own id. */
  key: readonly string[];
  /** What a claim returns besides the key and `attempts`. */
  returning: readonly string[];
  /** Stamped when an item succeeds, null otherwise. */
  doneAt: string;
  /** A lease column of its own, null when a claim leases by pushing `next_attempt_at` out. */
  leasedUntil: string | null;
  /** What only a queued item needs (a sealed secret): cleared once it succeeds or is given up. */
  clearedWhenDone: readonly string[];
}

export interface QueuePolicy {
  /** The attempt that fails at this count gives the item up. */
  maxAttempts: number;
  /** The wait before the next attempt after the n-th failed one (backoffDelay of n - 1). */
  backoff: BackoffOptions;
  /** How long a claimed item stays out of reach: only an item whose worker died is ever attempted twice. */
  leaseMs: number;
}

export interface Claimed {
  attempts: number;
}

export type FailedAttempt = 'retry' | 'failed';

/**
 * A durable work queue on one table: items are claimed with `FOR UPDATE SKIP LOCKED` (two workers never
 * claim the same item, and no transaction stays open while the work runs), each claim counts an attempt and
 * leases the item, and the worker then completes it, or fails the attempt: retried with capped exponential
 * backoff until `maxAttempts`, then given up. An item whose worker died comes back when its lease lapses.
 * Work that must run at most once uses the claim-once mode instead (ClaimOnceQueue).
 */
export class DurableQueue<T extends Claimed> {
  private readonly keyMatch: string;
  private readonly returning: string;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly spec: QueueTable,
    readonly policy: QueuePolicy,
  ) {
    this.keyMatch = spec.key.map((column, i) => `${column} = $${i + 1}`).join(' AND ');
    this.returning = [...spec.key, ...spec.returning, 'attempts'].map((column) => `q.${column}`).join(', ');
  }

  /** Whether a claimed item is past its last attempt (its worker died during it). */
  exhausted(item: T): boolean {
    return item.attempts > this.policy.maxAttempts;
  }

  /** Up to `limit` due items, oldest first; only item `id` when given (and due). */
  async claim(limit: number, id: string | null = null): Promise<T[]> {
    const { table, key } = this.spec;
    const now = this.clock.now();
    const idColumn = key[key.length - 1];
    return this.db.query<T>(
      `UPDATE ${table} q SET ${this.leaseSet('$1', '$2')}
         FROM (SELECT ${key.join(', ')} FROM ${table}
                WHERE status = 'pending' AND next_attempt_at <= $1 AND ($3::uuid IS NULL OR ${idColumn} = $3)
                ORDER BY next_attempt_at
                LIMIT $4
                  FOR UPDATE SKIP LOCKED) picked
        WHERE ${key.map((column) => `q.${column} = picked.${column}`).join(' AND ')}
        RETURNING ${this.returning}`,
      [now, this.leaseEnd(now), id, limit],
    );
  }

  /**
   * Up to `limit` due items, fair across tenants: each tenant's oldest due items up to its free share
   * (`perTenant` less its leases in flight anywhere), the least busy tenants first, so every tenant's first
   * turn comes before anyone's second. Claims run one at a time over every worker, so each sees the leases
   * of the one before. Needs a lease column and `tenant_id` as the key's first column.
   */
  async claimFair(limit: number, perTenant: number): Promise<T[]> {
    const { table, leasedUntil, name } = this.spec;
    if (leasedUntil === null) {
      throw new Error(`${name}: a fair claim counts leases in a lease column`);
    }
    const now = this.clock.now();
    return this.db.transaction(async () => {
      await this.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${name}-claim`]);
      return this.db.query<T>(
        `WITH RECURSIVE due (tenant_id) AS (
             (SELECT tenant_id FROM ${table}
               WHERE status = 'pending' AND next_attempt_at <= $1
               ORDER BY tenant_id LIMIT 1)
           UNION ALL
             SELECT (SELECT w.tenant_id FROM ${table} w
                      WHERE w.status = 'pending' AND w.next_attempt_at <= $1 AND w.tenant_id > due.tenant_id
                      ORDER BY w.tenant_id LIMIT 1)
               FROM due WHERE due.tenant_id IS NOT NULL
         ), busy AS (
           SELECT tenant_id, count(*)::int AS leased FROM ${table}
            WHERE status = 'pending' AND ${leasedUntil} IS NOT NULL AND ${leasedUntil} > $1
            GROUP BY tenant_id
         ), picked AS (
           SELECT c.tenant_id, c.id
             FROM due
             LEFT JOIN busy ON busy.tenant_id = due.tenant_id
             CROSS JOIN LATERAL (
               SELECT w.tenant_id, w.id, w.next_attempt_at FROM ${table} w
                WHERE w.tenant_id = due.tenant_id AND w.status = 'pending' AND w.next_attempt_at <= $1
                ORDER BY w.next_attempt_at
                LIMIT greatest($4::int - coalesce(busy.leased, 0), 0)
                  FOR UPDATE OF w SKIP LOCKED) c
            WHERE due.tenant_id IS NOT NULL
            ORDER BY coalesce(busy.leased, 0) + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.next_attempt_at),
                     c.next_attempt_at
            LIMIT $3
         )
         UPDATE ${table} q SET ${this.leaseSet('$1', '$2')}
           FROM picked
          WHERE q.tenant_id = picked.tenant_id AND q.id = picked.id
          RETURNING ${this.returning}`,
        [now, this.leaseEnd(now), limit, perTenant],
      );
    });
  }

  /** The item succeeded, as `status`. */
  async complete(item: T, status: string): Promise<void> {
    const now = this.clock.now();
    await this.settle(item, status, null, now, now);
  }

  /** The attempt failed because of `cause`: retried after the backoff, or given up after the last attempt. */
  async attemptFailed(item: T, cause: string): Promise<FailedAttempt> {
    if (item.attempts >= this.policy.maxAttempts) {
      await this.giveUp(item, cause);
      return 'failed';
    }
    const retryAt = this.clock.now().getTime() + backoffDelay(item.attempts - 1, this.policy.backoff);
    await this.settle(item, 'pending', cause, new Date(retryAt), null);
    return 'retry';
  }

  /** The item can never succeed: given up now, whatever its attempts. */
  async giveUp(item: T, cause: string): Promise<void> {
    await this.settle(item, 'failed', cause, this.clock.now(), null);
  }

  /** In the transaction open at the call: every queued item whose columns equal `where`, given up. */
  async giveUpWhere(where: Record<string, unknown>, cause: string): Promise<void> {
    const columns = Object.keys(where);
    const cleared = this.spec.clearedWhenDone.map((column) => `, ${column} = NULL`).join('');
    await this.db.execute(
      `UPDATE ${this.spec.table} SET status = 'failed', last_error = $${columns.length + 1}${cleared}
        WHERE ${columns.map((column, i) => `${column} = $${i + 1}`).join(' AND ')} AND status = 'pending'`,
      [...Object.values(where), cause],
    );
  }

  /** Left alone when the item is no longer queued (given up meanwhile, or replaced). */
  private async settle(
    item: T,
    status: string,
    cause: string | null,
    nextAttemptAt: Date,
    doneAt: Date | null,
  ): Promise<void> {
    const { table, key, leasedUntil, clearedWhenDone, doneAt: doneColumn } = this.spec;
    const n = key.length;
    const keep = status === 'pending';
    const sets = [
      `status = $${n + 1}`,
      `last_error = $${n + 2}`,
      `next_attempt_at = $${n + 3}`,
      `${doneColumn} = $${n + 4}::timestamptz`,
      ...(leasedUntil === null ? [] : [`${leasedUntil} = NULL`]),
      ...clearedWhenDone.map((column) => `${column} = CASE WHEN $${n + 5}::boolean THEN ${column} END`),
    ];
    await this.db.execute(
      `UPDATE ${table} SET ${sets.join(', ')} WHERE ${this.keyMatch} AND status = 'pending'`,
      [
        ...key.map((column) => (item as unknown as Record<string, unknown>)[column]),
        status,
        cause,
        nextAttemptAt,
        doneAt,
        ...(clearedWhenDone.length > 0 ? [keep] : []),
      ],
    );
  }

  private leaseSet(now: string, until: string): string {
    const lease = this.spec.leasedUntil === null ? '' : `, ${this.spec.leasedUntil} = ${until}`;
    return `attempts = q.attempts + 1, last_attempt_at = ${now}, next_attempt_at = ${until}${lease}`;
  }

  private leaseEnd(now: Date): Date {
    return new Date(now.getTime() + this.policy.leaseMs);
  }
}
