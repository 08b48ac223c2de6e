import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { preparedQuery, Statement } from '../database/prepared-query';
import { StatementBatcher } from '../database/statement-batcher';
import { commitWith } from '../database/whole-transaction';
import type { CapturedResponse } from './captured-response';
import { claimSql, COMPLETE_SQL, releaseSql } from './idempotency-sql';

/** How long a successful response is replayed. */
export const REPLAY_FOR_MS = 24 * 60 * 60 * 1000;
/**
 * Added to the time limits of the routes whose work cannot roll back (/proxy: PROXY_TIMEOUT_MS, a reaction:
 * SANDBOX_TIMEOUT_MS), the only ones that leave a claim running across a crash (every other keyed write
 * claims inside its own transaction): a claim still running after the longer of them and this margin was cut
 * off (its process died between the work and the record), and a retry may take it over.
 */
export const STALE_MARGIN_MS = 5000;
const PURGE_BATCH = 1000;

/** What identifies one idempotent request: who sent it under which key, and what it asked. */
export interface IdempotentRequest {
  tenantId: string;
  /** The caller's key space (IdempotencyScope). */
  scope: string;
  key: string;
  method: string;
  /** The path and query as sent. */
  path: string;
  /** SHA-256 (hex) of the raw body. */
  bodyHash: string;
}

/** A request asking for its key, with the hashes the table keeps. */
interface Claim extends IdempotentRequest {
  keyHash: string;
  pathHash: string;
  attempt: string;
}

/** The right to record the outcome of the request that now owns the key. */
export interface Ticket {
  tenantId: string;
  scope: string;
  keyHash: string;
  attempt: string;
}

/** A claim to send as the first statement of a transaction, and what its rows mean. */
export interface OpeningClaim {
  statement: Statement;
  begun: (rows: object[]) => Promise<Begun>;
}

export type Begun = { kind: 'run'; ticket: Ticket } | { kind: 'replay'; response: CapturedResponse | null };

interface Row {
  method: string;
  path_hash: string;
  body_hash: string;
  state: 'running' | 'done';
  response: Buffer | null;
}

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * The idempotency keys, in PostgreSQL (the one state replicas share): the first request with a key claims it
 * with one INSERT; a concurrent or later one finds the claim and gets a 409, the stored answer, or a 422 if
 * it asks something else under the same key. Only successes are kept, sealed under the tenant's data key
 * and bound to the caller, so a stored answer opens for no other application.
 */
@Injectable()
export class IdempotencyStore {
  private readonly claims = new StatementBatcher((r: Claim[]) => this.claimAll(r), sameKey, 64, tenantOf);
  private readonly completions = new StatementBatcher(
    (d: { ticket: Ticket; response: Buffer | null }[]) => this.completeAll(d),
    (d) => sameKey(d.ticket),
    64,
    (d) => d.ticket.tenantId,
  );
  private readonly releases = new StatementBatcher(
    (t: Ticket[]) => this.releaseAll(t),
    sameKey,
    64,
    tenantOf,
  );

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** How old a running claim is before a retry may take it over (see STALE_MARGIN_MS). */
  get staleAfterMs(): number {
    return Math.max(this.config.proxyTimeoutMs, this.config.sandboxTimeoutMs) + STALE_MARGIN_MS;
  }

  /**
   * Claims the key, or finds its claim. `inTransaction`: in the caller's open transaction (see
   * AtomicWrites), its own statement, durable with the commit of the work it claims for.
   */
  async begin(request: IdempotentRequest, inTransaction = false): Promise<Begun> {
    const claim = claimOf(request);
    const claimed = inTransaction ? (await this.claimAll([claim], true))[0] : await this.claims.submit(claim);
    return this.begun(claim, claimed, inTransaction);
  }

  /**
   * The claim as the first statement of the transaction that does the work (AtomicWrites sends it in the
   * round trip of the BEGIN), and what its rows mean: this request runs, or a kept answer is replayed.
   */
  openingClaim(request: IdempotentRequest): OpeningClaim {
    const claim = claimOf(request);
    return {
      statement: this.claimStatement([claim], true),
      begun: (rows) => this.begun(claim, won([claim], rows as { attempt: string }[])[0], true),
    };
  }

  private async begun(claim: Claim, claimed: boolean, inTransaction: boolean): Promise<Begun> {
    const { tenantId, scope, keyHash, pathHash, attempt } = claim;
    const ticket = { tenantId, scope, keyHash, attempt };
    if (claimed) {
      return { kind: 'run', ticket };
    }
    const [row] = await this.write<Row>(
      'find',
      `SELECT method, path_hash, body_hash, state, response FROM idempotency_keys
       WHERE tenant_id = $1 AND scope = $2 AND key_hash = $3`,
      [tenantId, scope, keyHash],
    );
    if (row === undefined) {
      // Deleted between the two statements (the first request failed): this one may run.
      return this.begin(claim, inTransaction);
    }
    const mismatch =
      row.method !== claim.method
        ? `method (${row.method})`
        : row.path_hash !== pathHash
          ? 'path'
          : row.body_hash !== claim.bodyHash
            ? 'body'
            : null;
    if (mismatch !== null) {
      throw new ApiError(
        422,
        `This idempotency key was used for a request with a different ${mismatch}: use a new key for a new request.`,
      );
    }
    if (row.state === 'running') {
      throw new ApiError(
        409,
        'A request with this idempotency key is still being processed: retry once it has finished.',
      );
    }
    return {
      kind: 'replay',
      response:
        row.response === null
          ? null
          : ((await this.cipher.openJson(
              'idempotency',
              tenantId,
              boundTo(ticket),
              row.response,
            )) as CapturedResponse | null),
    };
  }

  /** The request succeeded: keep its answer for replays (null: too large to keep, or a disclosure's). */
  async complete(ticket: Ticket, response: CapturedResponse | null): Promise<void> {
    const sealed =
      response === null
        ? null
        : await this.cipher.sealJson('idempotency', ticket.tenantId, boundTo(ticket), response);
    await this.completions.submit({ ticket, response: sealed });
  }

  /**
   * The request failed: failures are not kept, so a retry runs again. Not flushed (see claimAll): a release
   * lost in a crash leaves a claim that a retry takes over once it is stale.
   */
  async abandon(ticket: Ticket): Promise<void> {
    await this.releases.submit(ticket);
  }

  /** complete, as the last statement of the open whole transaction, in its COMMIT's round trip (commitWith). */
  async completeAtCommit(ticket: Ticket, response: CapturedResponse | null): Promise<void> {
    const sealed =
      response === null
        ? null
        : await this.cipher.sealJson('idempotency', ticket.tenantId, boundTo(ticket), response);
    commitWith(this.statement('complete', COMPLETE_SQL, [...ticketColumns([ticket]), [sealed]]));
  }

  /** abandon, as the last statement of the open whole transaction, in its COMMIT's round trip (commitWith). */
  abandonAtCommit(ticket: Ticket): void {
    commitWith(this.statement('abandon-in-transaction', releaseSql(true), ticketColumns([ticket])));
  }

  /**
   * Claims new keys, expired ones, and ones whose request was cut off (same request only); answers, per
   * request, whether it now owns its key. One statement for all the requests that arrived together
   * (StatementBatcher). The claim commits without waiting for its WAL flush (a disk sync costs as much as
   * the token write itself): WAL is flushed in order, so the work's own durable commit, or the durable
   * `complete`, makes the claim durable too; a claim lost in a crash before either had nothing to protect.
   */
  private async claimAll(requests: Claim[], inTransaction = false): Promise<boolean[]> {
    return won(requests, await this.run<{ attempt: string }>(this.claimStatement(requests, inTransaction)));
  }

  /** In the work's transaction, the commit must wait for its flush as the work's own would. */
  private claimStatement(requests: Claim[], inTransaction: boolean): Statement {
    const now = this.clock.now();
    return this.statement(inTransaction ? 'claim-in-transaction' : 'claim', claimSql(inTransaction), [
      requests.map((r) => r.tenantId),
      requests.map((r) => r.scope),
      requests.map((r) => r.keyHash),
      requests.map((r) => r.method),
      requests.map((r) => r.pathHash),
      requests.map((r) => r.bodyHash),
      requests.map((r) => r.attempt),
      now,
      new Date(now.getTime() + REPLAY_FOR_MS),
      new Date(now.getTime() - this.staleAfterMs),
    ]);
  }

  private async completeAll(done: { ticket: Ticket; response: Buffer | null }[]): Promise<void[]> {
    const tickets = ticketColumns(done.map((d) => d.ticket));
    await this.run(this.statement('complete', COMPLETE_SQL, [...tickets, done.map((d) => d.response)]));
    return done.map(() => undefined);
  }

  private async releaseAll(tickets: Ticket[]): Promise<void[]> {
    await this.run(this.statement('abandon', releaseSql(false), ticketColumns(tickets)));
    return tickets.map(() => undefined);
  }

  private write<T extends object>(name: string, sql: string, parameters: unknown[]): Promise<T[]> {
    return this.run<T>(this.statement(name, sql, parameters));
  }

  /** The hot statements, prepared once per connection like the token statements (DATABASE_PREPARED_STATEMENTS). */
  private statement(name: string, text: string, values: unknown[]): Statement {
    return { name: this.config.databasePreparedStatements ? `idempotency.${name}` : undefined, text, values };
  }

  private run<T extends object>({ name, text, values = [] }: Statement): Promise<T[]> {
    return preparedQuery<T>(this.dataSource.manager, name ?? '', text, values, name !== undefined);
  }

  /** Deletes the keys past their 24 hours, in batches; returns how many. */
  async purgeExpired(now: Date): Promise<number> {
    let total = 0;
    for (;;) {
      // TypeORM answers a DELETE with [rows, count].
      const [, deleted] = await this.dataSource.query<[unknown, number]>(
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
}

function claimOf(request: IdempotentRequest): Claim {
  return { ...request, keyHash: sha256(request.key), pathHash: sha256(request.path), attempt: randomUUID() };
}

/** Per claim, whether it won its key: the claim statement answers the attempts that did. */
function won(claims: Claim[], rows: { attempt: string }[]): boolean[] {
  const attempts = new Set(rows.map((row) => row.attempt));
  return claims.map((c) => attempts.has(c.attempt));
}

/** Two statements' rows for one key must not share a statement. */
function sameKey(row: { tenantId: string; scope: string; keyHash: string }): string {
  return `${row.tenantId}/${row.scope}/${row.keyHash}`;
}

const tenantOf = (row: { tenantId: string }): string => row.tenantId;

function ticketColumns(tickets: Ticket[]): string[][] {
  return [
    tickets.map((t) => t.tenantId),
    tickets.map((t) => t.scope),
    tickets.map((t) => t.keyHash),
    tickets.map((t) => t.attempt),
  ];
}

/** The sealed answer opens only for this caller and key. */
function boundTo(ticket: Ticket): string {
  return `${ticket.scope}:${ticket.keyHash}`;
}
