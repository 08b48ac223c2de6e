import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { Database } from '../database/database.service';
import type { Statement } from '../database/prepared-query';
import type { StatementBatcher } from '../database/statement-batcher';

/** One request's claim of its key: the hashes the table keeps, and the attempt that would own it. */
export interface KeyClaim {
  tenantId: string;
  /** The caller's key space (IdempotencyScope). */
  scope: string;
  keyHash: string;
  method: string;
  pathHash: string;
  bodyHash: string;
  attempt: string;
}

/** The right to record the outcome of the request that now owns the key. */
export interface Ticket {
  tenantId: string;
  scope: string;
  keyHash: string;
  attempt: string;
}

/** How long a claim lives: its answer is replayed for `replayForMs`, it is stale after `staleAfterMs` running. */
export interface ClaimLifetimes {
  replayForMs: number;
  staleAfterMs: number;
}

/** What the table keeps of a key's request. */
export interface KeptRequest {
  method: string;
  path_hash: string;
  body_hash: string;
  state: 'running' | 'done';
  response: Buffer | null;
}

const PURGE_BATCH = 1000;

/** One not sent in a whole transaction (AtomicWrites) commits without waiting for its WAL flush (see claim). */
const NO_FLUSH_WAIT = `(SELECT set_config('synchronous_commit', 'off', true))`;

/**
 * Claims new keys, expired ones, and ones whose request was cut off (the same request only), answering the
 * attempt of each claim won. $1..$7 the claims' columns, $8 now, $9 their expiry, $10 the stale limit.
 */
function claimSql(inTransaction: boolean): string {
  return `INSERT INTO idempotency_keys AS k
         (tenant_id, scope, key_hash, method, path_hash, body_hash, state, attempt, created_at, expires_at)
       SELECT r.tenant_id, r.scope, r.key_hash, r.method, r.path_hash, r.body_hash, 'running', r.attempt, $8, $9
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::uuid[])
              AS r (tenant_id, scope, key_hash, method, path_hash, body_hash, attempt)${inTransaction ? '' : `, ${NO_FLUSH_WAIT} AS no_flush_wait`}
       ON CONFLICT (tenant_id, scope, key_hash) DO UPDATE
         SET method = EXCLUDED.method, path_hash = EXCLUDED.path_hash, body_hash = EXCLUDED.body_hash,
             state = 'running', attempt = EXCLUDED.attempt, response = NULL,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE k.expires_at <= EXCLUDED.created_at
            OR (k.state = 'running' AND k.created_at <= $10 AND k.method = EXCLUDED.method
                AND k.path_hash = EXCLUDED.path_hash AND k.body_hash = EXCLUDED.body_hash)
       RETURNING k.attempt`;
}

/** Keeps the answers of the tickets' requests: $1..$4 the tickets' columns, $5 the sealed answers. */
const COMPLETE_SQL = `UPDATE idempotency_keys AS k SET state = 'done', response = r.response
       FROM unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[], $5::bytea[])
              AS r (tenant_id, scope, key_hash, attempt, response)
       WHERE k.tenant_id = r.tenant_id AND k.scope = r.scope AND k.key_hash = r.key_hash
         AND k.attempt = r.attempt`;

/** Drops the claims of the tickets ($1..$4 their columns), whose requests failed. */
function releaseSql(inTransaction: boolean): string {
  return `DELETE FROM idempotency_keys AS k
       USING unnest($1::uuid[], $2::text[], $3::text[], $4::uuid[]) AS r (tenant_id, scope, key_hash, attempt)
       WHERE k.tenant_id = r.tenant_id AND k.scope = r.scope AND k.key_hash = r.key_hash
         AND k.attempt = r.attempt${inTransaction ? '' : ` AND ${NO_FLUSH_WAIT} = 'off'`}`;
}

/**
 * The idempotency keys' statements, each for many rows at once (unnest): the ones sent on their own carry
 * the rows of every request that arrived together (Database.batcher, per tenant), prepared once per
 * connection like the token statements.
 */
@Injectable()
export class IdempotencyKeysRepository {
  private readonly claims: StatementBatcher<{ claim: KeyClaim; lifetimes: ClaimLifetimes }, boolean>;
  private readonly completions: StatementBatcher<{ ticket: Ticket; response: Buffer | null }, void>;
  private readonly releases: StatementBatcher<Ticket, void>;

  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {
    this.claims = db.batcher(
      (r: { claim: KeyClaim; lifetimes: ClaimLifetimes }[]) =>
        this.claimAll(
          r.map((c) => c.claim),
          r[0].lifetimes,
        ),
      { tenant: (c) => c.claim.tenantId, conflictKey: (c) => sameKey(c.claim), max: 64 },
    );
    this.completions = db.batcher((d: { ticket: Ticket; response: Buffer | null }[]) => this.completeAll(d), {
      tenant: (d) => d.ticket.tenantId,
      conflictKey: (d) => sameKey(d.ticket),
      max: 64,
    });
    this.releases = db.batcher((t: Ticket[]) => this.releaseAll(t), {
      tenant: (t) => t.tenantId,
      conflictKey: sameKey,
      max: 64,
    });
  }

  /**
   * Claims the key if it is new, expired, or its request was cut off (same request only); whether this claim
   * now owns it. One statement for all the requests that arrived together. It commits without waiting for its
   * WAL flush (a disk sync costs as much as the token write itself): WAL is flushed in order, so the work's own
   * durable commit, or the durable `complete`, makes the claim durable too; a claim lost in a crash before
   * either had nothing to protect.
   */
  claim(claim: KeyClaim, lifetimes: ClaimLifetimes): Promise<boolean> {
    return this.claims.submit({ claim, lifetimes });
  }

  /** claim, in the caller's open transaction: its own statement, durable with the commit of the work it claims for. */
  async claimInTransaction(claim: KeyClaim, lifetimes: ClaimLifetimes): Promise<boolean> {
    return (await this.claimAll([claim], lifetimes, true))[0];
  }

  /**
   * claimInTransaction as the first statement of the transaction that does the work (sent in the round trip of
   * its BEGIN: Database.runWhole); `claimed` reads its rows.
   */
  openingClaim(claim: KeyClaim, lifetimes: ClaimLifetimes): Statement {
    return this.claimStatement([claim], lifetimes, true);
  }

  /** Whether the claim won its key, by the rows of its openingClaim. */
  claimed(claim: KeyClaim, rows: object[]): boolean {
    return won([claim], rows as { attempt: string }[])[0];
  }

  /** What the table keeps of the key; undefined for none. */
  async find(tenantId: string, scope: string, keyHash: string): Promise<KeptRequest | undefined> {
    const [row] = await this.db.prepared<KeptRequest>(
      'idempotency.find',
      `SELECT method, path_hash, body_hash, state, response FROM idempotency_keys
       WHERE tenant_id = $1 AND scope = $2 AND key_hash = $3`,
      [tenantId, scope, keyHash],
    );
    return row;
  }

  /** Keeps the ticket's sealed answer (null: none kept) and marks its request done. */
  async complete(ticket: Ticket, response: Buffer | null): Promise<void> {
    await this.completions.submit({ ticket, response });
  }

  /**
   * Drops the ticket's claim. Not flushed (see claim): a release lost in a crash leaves a claim that a retry
   * takes over once it is stale.
   */
  async release(ticket: Ticket): Promise<void> {
    await this.releases.submit(ticket);
  }

  /** complete, as the last statement of the open whole transaction, in its COMMIT's round trip. */
  completeAtCommit(ticket: Ticket, response: Buffer | null): void {
    this.db.commitWith({
      name: 'idempotency.complete',
      text: COMPLETE_SQL,
      values: [...ticketColumns([ticket]), [response]],
    });
  }

  /** release, as the last statement of the open whole transaction, in its COMMIT's round trip. */
  releaseAtCommit(ticket: Ticket): void {
    this.db.commitWith({
      name: 'idempotency.abandon-in-transaction',
      text: releaseSql(true),
      values: ticketColumns([ticket]),
    });
  }

  /** Deletes the keys expired at `now`, in batches; returns how many. */
  async deleteExpired(now: Date): Promise<number> {
    let total = 0;
    for (;;) {
      const deleted = await this.db.execute(
        `DELETE FROM idempotency_keys WHERE ctid IN (
           SELECT ctid FROM idempotency_keys WHERE expires_at <= $1 LIMIT ${PURGE_BATCH})`,
        [now],
      );
      total += deleted;
      if (deleted < PURGE_BATCH) {
        return total;
      }
    }
  }

  private async claimAll(
    claims: KeyClaim[],
    lifetimes: ClaimLifetimes,
    inTransaction = false,
  ): Promise<boolean[]> {
    const { name, text, values } = this.claimStatement(claims, lifetimes, inTransaction);
    return won(claims, await this.db.prepared<{ attempt: string }>(name as string, text, values ?? []));
  }

  /** In the work's transaction, the commit must wait for its flush as the work's own would. */
  private claimStatement(claims: KeyClaim[], lifetimes: ClaimLifetimes, inTransaction: boolean): Statement {
    const now = this.clock.now();
    return {
      name: inTransaction ? 'idempotency.claim-in-transaction' : 'idempotency.claim',
      text: claimSql(inTransaction),
      values: [
        claims.map((r) => r.tenantId),
        claims.map((r) => r.scope),
        claims.map((r) => r.keyHash),
        claims.map((r) => r.method),
        claims.map((r) => r.pathHash),
        claims.map((r) => r.bodyHash),
        claims.map((r) => r.attempt),
        now,
        new Date(now.getTime() + lifetimes.replayForMs),
        new Date(now.getTime() - lifetimes.staleAfterMs),
      ],
    };
  }

  private async completeAll(done: { ticket: Ticket; response: Buffer | null }[]): Promise<void[]> {
    const tickets = ticketColumns(done.map((d) => d.ticket));
    await this.db.prepared('idempotency.complete', COMPLETE_SQL, [...tickets, done.map((d) => d.response)]);
    return done.map(() => undefined);
  }

  private async releaseAll(tickets: Ticket[]): Promise<void[]> {
    await this.db.prepared('idempotency.abandon', releaseSql(false), ticketColumns(tickets));
    return tickets.map(() => undefined);
  }
}

/** Per claim, whether it won its key: the claim statement answers the attempts that did. */
function won(claims: KeyClaim[], rows: { attempt: string }[]): boolean[] {
  const attempts = new Set(rows.map((row) => row.attempt));
  return claims.map((c) => attempts.has(c.attempt));
}

/** Two statements' rows for one key must not share a statement. */
function sameKey(row: { tenantId: string; scope: string; keyHash: string }): string {
  return `${row.tenantId}/${row.scope}/${row.keyHash}`;
}

function ticketColumns(tickets: Ticket[]): string[][] {
  return [
    tickets.map((t) => t.tenantId),
    tickets.map((t) => t.scope),
    tickets.map((t) => t.keyHash),
    tickets.map((t) => t.attempt),
  ];
}
