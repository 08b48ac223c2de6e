import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomUUID } from 'node:crypto';
import { ApiError } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import type { Statement } from '../database/prepared-query';
import type { CapturedResponse } from './captured-response';
import { ClaimLifetimes, IdempotencyKeysRepository, KeyClaim, Ticket } from './idempotency-keys.repository';

export type { Ticket } from './idempotency-keys.repository';

/** How long a successful response is replayed. */
export const REPLAY_FOR_MS = 24 * 60 * 60 * 1000;
/**
 * Added to the time limits of the routes whose work cannot roll back (/proxy: PROXY_TIMEOUT_MS, a reaction:
 * SANDBOX_TIMEOUT_MS), the only ones that leave a claim running across a crash (every other keyed write
 * claims inside its own transaction): a claim still running after the longer of them and this margin was cut
 * off (its process died between the work and the record), and a retry may take it over.
 */
export const STALE_MARGIN_MS = 5000;

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
type Claim = IdempotentRequest & KeyClaim;

/** A claim to send as the first statement of a transaction, and what its rows mean. */
export interface OpeningClaim {
  statement: Statement;
  begun: (rows: object[]) => Promise<Begun>;
}

export type Begun = { kind: 'run'; ticket: Ticket } | { kind: 'replay'; response: CapturedResponse | null };

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
    private readonly keys: IdempotencyKeysRepository,
    private readonly cipher: TenantCipher,
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
    const claimed = inTransaction
      ? await this.keys.claimInTransaction(claim, this.lifetimes())
      : await this.keys.claim(claim, this.lifetimes());
    return this.begun(claim, claimed, inTransaction);
  }

  /**
   * The claim as the first statement of the transaction that does the work (AtomicWrites sends it in the
   * round trip of the BEGIN), and what its rows mean: this request runs, or a kept answer is replayed.
   */
  openingClaim(request: IdempotentRequest): OpeningClaim {
    const claim = claimOf(request);
    return {
      statement: this.keys.openingClaim(claim, this.lifetimes()),
      begun: (rows) => this.begun(claim, this.keys.claimed(claim, rows), true),
    };
  }

  private async begun(claim: Claim, claimed: boolean, inTransaction: boolean): Promise<Begun> {
    const { tenantId, scope, keyHash, pathHash, attempt } = claim;
    const ticket = { tenantId, scope, keyHash, attempt };
    if (claimed) {
      return { kind: 'run', ticket };
    }
    const row = await this.keys.find(tenantId, scope, keyHash);
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
    await this.keys.complete(ticket, await this.sealed(ticket, response));
  }

  /**
   * The request failed: failures are not kept, so a retry runs again. Not flushed: a release lost in a crash
   * leaves a claim that a retry takes over once it is stale.
   */
  async abandon(ticket: Ticket): Promise<void> {
    await this.keys.release(ticket);
  }

  /** complete, as the last statement of the open whole transaction, in its COMMIT's round trip. */
  async completeAtCommit(ticket: Ticket, response: CapturedResponse | null): Promise<void> {
    this.keys.completeAtCommit(ticket, await this.sealed(ticket, response));
  }

  /** abandon, as the last statement of the open whole transaction, in its COMMIT's round trip. */
  abandonAtCommit(ticket: Ticket): void {
    this.keys.releaseAtCommit(ticket);
  }

  /** Deletes the keys past their 24 hours, in batches; returns how many. */
  purgeExpired(now: Date): Promise<number> {
    return this.keys.deleteExpired(now);
  }

  private lifetimes(): ClaimLifetimes {
    return { replayForMs: REPLAY_FOR_MS, staleAfterMs: this.staleAfterMs };
  }

  private async sealed(ticket: Ticket, response: CapturedResponse | null): Promise<Buffer | null> {
    return response === null
      ? null
      : this.cipher.sealJson('idempotency', ticket.tenantId, boundTo(ticket), response);
  }
}

function claimOf(request: IdempotentRequest): Claim {
  return { ...request, keyHash: sha256(request.key), pathHash: sha256(request.path), attempt: randomUUID() };
}

/** The sealed answer opens only for this caller and key. */
function boundTo(ticket: Ticket): string {
  return `${ticket.scope}:${ticket.keyHash}`;
}
