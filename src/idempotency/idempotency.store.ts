import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { createHash, randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { preparedQuery } from '../database/prepared-query';
import type { CapturedResponse } from './captured-response';

/** How long a successful response is replayed. */
export const REPLAY_FOR_MS = 24 * 60 * 60 * 1000;
/**
 * A request still marked running after this long was cut off (its process died between the work and the
 * record): a retry may take it over. Longer than any request may run (the proxy's own limit is 25 s).
 */
export const STALE_AFTER_MS = 2 * 60 * 1000;
const PURGE_BATCH = 1000;

/** What identifies one idempotent request: who sent it under which key, and what it asked. */
export interface IdempotentRequest {
  tenantId: string;
  /** The caller: an application id, or `proxy:<id>` for a proxy that needs no key. */
  scope: string;
  key: string;
  method: string;
  /** The path and query as sent. */
  path: string;
  /** SHA-256 (hex) of the raw body. */
  bodyHash: string;
}

/** The right to record the outcome of the request that now owns the key. */
export interface Ticket {
  tenantId: string;
  scope: string;
  keyHash: string;
  attempt: string;
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
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async begin(request: IdempotentRequest): Promise<Begun> {
    const now = this.clock.now();
    const keyHash = sha256(request.key);
    const pathHash = sha256(request.path);
    const attempt = randomUUID();
    // Claims a new key, an expired one, or one whose request was cut off (same request only).
    const claimed = await this.write<object>(
      'claim',
      `INSERT INTO idempotency_keys AS k
         (tenant_id, scope, key_hash, method, path_hash, body_hash, state, attempt, created_at, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'running', $7, $8, $9)
       ON CONFLICT (tenant_id, scope, key_hash) DO UPDATE
         SET method = EXCLUDED.method, path_hash = EXCLUDED.path_hash, body_hash = EXCLUDED.body_hash,
             state = 'running', attempt = EXCLUDED.attempt, response = NULL,
             created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE k.expires_at <= EXCLUDED.created_at
            OR (k.state = 'running' AND k.created_at <= $10 AND k.method = EXCLUDED.method
                AND k.path_hash = EXCLUDED.path_hash AND k.body_hash = EXCLUDED.body_hash)
       RETURNING 1 AS claimed`,
      [
        request.tenantId,
        request.scope,
        keyHash,
        request.method,
        pathHash,
        request.bodyHash,
        attempt,
        now,
        new Date(now.getTime() + REPLAY_FOR_MS),
        new Date(now.getTime() - STALE_AFTER_MS),
      ],
    );
    const ticket = { tenantId: request.tenantId, scope: request.scope, keyHash, attempt };
    if (claimed.length > 0) {
      return { kind: 'run', ticket };
    }
    const [row] = await this.write<Row>(
      'find',
      `SELECT method, path_hash, body_hash, state, response FROM idempotency_keys
       WHERE tenant_id = $1 AND scope = $2 AND key_hash = $3`,
      [request.tenantId, request.scope, keyHash],
    );
    if (row === undefined) {
      // Deleted between the two statements (the first request failed): this one may run.
      return this.begin(request);
    }
    const mismatch =
      row.method !== request.method
        ? `method (${row.method})`
        : row.path_hash !== pathHash
          ? 'path'
          : row.body_hash !== request.bodyHash
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
              request.tenantId,
              boundTo(ticket),
              row.response,
            )) as CapturedResponse | null),
    };
  }

  /** The request succeeded: keep its answer (null when too large to keep) for replays. */
  async complete(ticket: Ticket, response: CapturedResponse | null): Promise<void> {
    const sealed =
      response === null
        ? null
        : await this.cipher.sealJson('idempotency', ticket.tenantId, boundTo(ticket), response);
    await this.write(
      'complete',
      `UPDATE idempotency_keys SET state = 'done', response = $5
       WHERE tenant_id = $1 AND scope = $2 AND key_hash = $3 AND attempt = $4`,
      [ticket.tenantId, ticket.scope, ticket.keyHash, ticket.attempt, sealed],
    );
  }

  /** The request failed: failures are not kept, so a retry runs again. */
  async abandon(ticket: Ticket): Promise<void> {
    await this.write(
      'abandon',
      'DELETE FROM idempotency_keys WHERE tenant_id = $1 AND scope = $2 AND key_hash = $3 AND attempt = $4',
      [ticket.tenantId, ticket.scope, ticket.keyHash, ticket.attempt],
    );
  }

  /** The hot statements, prepared once per connection like the token statements (DATABASE_PREPARED_STATEMENTS). */
  private write<T extends object>(name: string, sql: string, parameters: unknown[]): Promise<T[]> {
    return preparedQuery<T>(
      this.dataSource.manager,
      `idempotency.${name}`,
      sql,
      parameters,
      this.config.databasePreparedStatements,
    );
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

/** The sealed answer opens only for this caller and key. */
function boundTo(ticket: Ticket): string {
  return `${ticket.scope}:${ticket.keyHash}`;
}
