import { Injectable } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { Transform } from '../access/access-rules';
import { containerScope } from '../access/access';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { DedupRateLimit } from './dedup-rate-limit';
import { TokenFields } from './token-fields';
import { Token } from './token.entity';
import { DuplicateScope, TokensRepository } from './tokens.repository';
import { AuditService } from '../audit/audit.service';
import type { AuditEvent } from '../audit/audit-event';
import { connectionFailure } from '../common/database-unavailable';
import { Database } from '../database/database.service';
import { Events } from '../events/events';
import { VaultEvent } from '../events/event-types';

/** What an insert did: stored the prepared token, or found the live token it duplicates (deduplicate_token). */
export type InsertOutcome = { inserted: PreparedToken } | { duplicateOf: Token };

/** The id of the token an insert answers with: the new one, or the duplicate it found. */
export function outcomeId(outcome: InsertOutcome): string {
  return 'inserted' in outcome ? outcome.inserted.row.id : outcome.duplicateOf.id;
}

export interface PreparedToken {
  row: Token;
  fields: TokenFields;
  /** Blind indexes of the rendered search_indexes. */
  indexHashes: string[];
  /** The caller's transform for the create response. */
  transform: Transform;
  /** Where a deduplicating create may find its duplicate; null when it cannot see any token. */
  duplicateScope: DuplicateScope | null;
}

/**
 * Writes prepared tokens (POST /tokens, /tokenize, the bt bridge). A deduplicating write only ever finds a
 * token its author may read and write (DuplicateScope): any other is treated as if it did not exist.
 */
@Injectable()
export class TokenInserter {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly clock: Clock,
    private readonly dedup: DedupRateLimit,
    private readonly events: Events,
    private readonly audit: AuditService,
    private readonly db: Database,
  ) {}

  /** One token (POST /tokens) and its audit record, `audited` naming the outcome: insertAll of one. */
  async insertOne(
    prepared: PreparedToken,
    audited: (outcome: InsertOutcome) => AuditEvent,
  ): Promise<InsertOutcome> {
    const [outcome] = await this.insertAll([prepared], ([only]) => audited(only));
    return outcome;
  }

  /**
   * Tokens (POST /tokens, /tokenize) and the one audit record `audited` makes of their outcomes, all or
   * nothing. Plain creates are one statement: tokens, index rows, outbox rows and record in one round trip,
   * atomic without a transaction. Deduplicating ones take fingerprint locks first, so they run step by step
   * in a transaction.
   */
  async insertAll(
    prepared: PreparedToken[],
    audited: (outcomes: InsertOutcome[]) => AuditEvent,
  ): Promise<InsertOutcome[]> {
    if (!prepared.some(looksForDuplicate)) {
      const outcomes: InsertOutcome[] = prepared.map((p) => ({ inserted: p }));
      const audit = this.audit.recordPart(audited(outcomes));
      const events = this.events.publishPart(outcomes.flatMap(createdEvent));
      try {
        await this.tokens.insertWith(
          prepared,
          [events, audit].filter((p) => p !== null),
        );
        audit?.written(true);
        this.dedup.record('created', prepared.filter((p) => p.fields.deduplicateToken === true).length);
        return outcomes;
      } catch (err) {
        if (isUniqueViolation(err)) {
          throw ApiError.conflict('A token with this id already exists.');
        }
        if (!(err instanceof QueryFailedError) || connectionFailure(err) !== null) {
          audit?.written(false);
          throw err;
        }
        // The statement does not say which of its parts failed; the same write step by step does (an audit
        // record that cannot be written answers 503, as on every route). Nothing of the first try was kept.
      }
    }
    return this.db.transaction(async () => {
      const outcomes = await this.insertMany(prepared);
      await this.audit.record(audited(outcomes));
      return outcomes;
    });
  }

  /**
   * Inserts prepared tokens in the caller's transaction: plain ones in one batch, deduplicating ones one
   * by one under fingerprint locks. Outcomes are presented after commit by `presentOutcome()` (decrypting inside the
   * transaction could wait for a second connection the embedded database does not have).
   */
  private async insertMany(prepared: PreparedToken[]): Promise<InsertOutcome[]> {
    const batch = prepared.filter((p) => !looksForDuplicate(p));
    try {
      if (batch.length > 0) {
        await this.tokens.insert(batch);
      }
      // A deduplicating write that can see no token to match is a plain insert.
      this.dedup.record('created', batch.filter((p) => p.fields.deduplicateToken === true).length);
      const deduplicating = prepared.filter(looksForDuplicate);
      // Every fingerprint lock up front, in one order: writers of the same cards never wait on each other in a cycle.
      await this.tokens.lockFingerprints(deduplicating.map((p) => p.row));
      const outcomes: InsertOutcome[] = [];
      for (const p of prepared) {
        outcomes.push(looksForDuplicate(p) ? await this.insertDeduplicated(p) : { inserted: p });
      }
      await this.events.publishAll(outcomes.flatMap(createdEvent));
      return outcomes;
    } catch (err) {
      throw isUniqueViolation(err) ? ApiError.conflict('A token with this id already exists.') : err;
    }
  }

  /** Under the fingerprint lock taken by insertMany. */
  private async insertDeduplicated(prepared: PreparedToken): Promise<InsertOutcome> {
    const { row } = prepared;
    const existing = await this.tokens.findDuplicate(
      row.tenantId,
      { type: row.type, fingerprint: row.fingerprint as string },
      prepared.duplicateScope as DuplicateScope,
      this.clock.now(),
    );
    if (existing !== null) {
      this.dedup.record('deduplicated');
      return { duplicateOf: existing };
    }
    await this.tokens.insert([prepared]);
    this.dedup.record('created');
    return { inserted: prepared };
  }
}

/** Where a deduplicating write of the principal may find its duplicate, or null when nowhere. */
export function duplicateScopeOf(principal: Principal, write: Permission): DuplicateScope | null {
  const read = containerScope(principal, 'token:read');
  const writable = containerScope(principal, write);
  const none = (scope: 'all' | string[]): boolean => scope !== 'all' && scope.length === 0;
  return none(read) || none(writable) ? null : { read, write: writable };
}

function looksForDuplicate(p: PreparedToken): boolean {
  return p.fields.deduplicateToken === true && p.row.fingerprint !== null && p.duplicateScope !== null;
}

function isUniqueViolation(err: unknown): boolean {
  return err instanceof QueryFailedError && (err.driverError as { code?: string }).code === '23505';
}

function createdEvent(outcome: InsertOutcome): VaultEvent[] {
  if (!('inserted' in outcome)) {
    return [];
  }
  const { row } = outcome.inserted;
  return [{ tenantId: row.tenantId, type: 'token.created', subject: { id: row.id, type: row.type } }];
}
