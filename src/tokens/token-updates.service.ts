import { Injectable } from '@nestjs/common';
import { Transform } from '../access/access-rules';
import { atMostMask, leastVisible, transformFor, writeTransform } from '../access/access';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { ExpressionEngine } from '../expressions';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Database } from '../database/database.service';
import { Events } from '../events/events';
import { DedupRateLimit } from './dedup-rate-limit';
import { TokenDto } from './dto/token.dto';
import { patchDenial } from './rules/patch-access';
import { TokenBuilder } from './token-builder.service';
import { applyPatch, TokenFields } from './token-fields';
import { duplicateScopeOf } from './token-inserter.service';
import { TokenPresentation } from './token-presentation.service';
import { presentUnreadable } from './token-presenter';
import { Token } from './token.entity';
import { DuplicateScope, TokensRepository } from './tokens.repository';
import { eachOf, TokensService } from './tokens.service';

const ATTEMPTS = 5;

/** The patch applied to the token as read, allowed for the caller. */
interface PatchedToken {
  /** The token as read; its ciphertext is what the write compares against. */
  current: Token;
  next: TokenFields;
  /** The caller's token:update transform on the patched containers. */
  transform: Transform;
  /** Where a deduplicating update may find its duplicate; null when it does not look for one. */
  duplicateScope: DuplicateScope | null;
  now: Date;
}

/** The patched token rebuilt as the row to write. */
interface RebuiltToken extends PatchedToken {
  row: Token;
  indexHashes: string[];
}

/** What one attempt's transaction did. */
type WriteOutcome =
  | { kind: 'saved' }
  | { kind: 'duplicate'; existing: Token }
  /** Another writer changed or deleted the token since it was read: nothing was written. */
  | { kind: 'stale' };

/**
 * PATCH /tokens/:id and bt.tokens.update: a merge patch, retried when another writer changed the token
 * between our read and our write. Every container before and after needs token:update, a new expiry
 * token:delete (patchDenial); the answer shows only what the caller could read.
 */
@Injectable()
export class TokenUpdates {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly reads: TokensService,
    private readonly builder: TokenBuilder,
    private readonly engine: ExpressionEngine,
    private readonly clock: Clock,
    private readonly dedup: DedupRateLimit,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly presentation: TokenPresentation,
    private readonly db: Database,
  ) {}

  async update(principal: Principal, id: string, patch: Record<string, unknown>): Promise<TokenDto> {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const patched = await this.patched(principal, id, patch);
      // The deduplication allowance and its metric count the request once: its first attempt.
      const counted = attempt === 0 && patched.next.deduplicateToken === true;
      if (counted) {
        await this.dedup.take(principal, 1);
      }
      const rebuilt = await this.rebuilt(principal, patched);
      const outcome = await this.write(principal, rebuilt);
      if (outcome.kind === 'stale') {
        continue;
      }
      if (counted) {
        this.dedup.record(outcome.kind === 'saved' ? 'created' : 'deduplicated');
      }
      return outcome.kind === 'saved'
        ? this.presentSaved(principal, rebuilt)
        : this.presentation.presentDuplicate(principal, outcome.existing);
    }
    throw ApiError.conflict('The token is being modified concurrently; retry the request.');
  }

  /** Reads the token and applies the patch: 404, 403 (before or after the patch) or 400 (the patched fields). */
  private async patched(
    principal: Principal,
    id: string,
    patch: Record<string, unknown>,
  ): Promise<PatchedToken> {
    const { row: current } = await this.reads.findAllowed(principal, id, 'token:update', writeTransform);
    const now = this.clock.now();
    const fields = await this.builder.fieldsOf(current);
    const next = applyPatch(fields, patch, this.engine, now);
    const transform = allowedUpdate(principal, fields, next);
    const duplicateScope =
      next.deduplicateToken === true ? duplicateScopeOf(principal, 'token:update') : null;
    return { current, next, transform, duplicateScope, now };
  }

  private async rebuilt(principal: Principal, patched: PatchedToken): Promise<RebuiltToken> {
    const { current, next, now } = patched;
    const identity = {
      tenantId: current.tenantId,
      id: current.id,
      createdBy: current.createdBy,
      createdAt: current.createdAt,
      modifiedBy: principal.applicationId,
      modifiedAt: now,
    };
    const { row, indexHashes } = await this.builder.build(identity, next, '');
    return { ...patched, row, indexHashes };
  }

  /** The duplicate check, the compare-and-swap save, its audit record and its event: one transaction. */
  private write(principal: Principal, token: RebuiltToken): Promise<WriteOutcome> {
    const { row, indexHashes, current } = token;
    return this.db.transaction(async (): Promise<WriteOutcome> => {
      const existing = await this.duplicateOf(token);
      if (existing !== null) {
        return { kind: 'duplicate', existing };
      }
      if (!(await this.tokens.save(row, indexHashes, current.data as Buffer))) {
        return { kind: 'stale' };
      }
      await this.audit.record(auditEvent(principal, 'token', row.id, 'update', 'Token updated'));
      await this.events.publish(row.tenantId, 'token.updated', { id: row.id, type: row.type });
      return { kind: 'saved' };
    });
  }

  /** The live token a deduplicating update lands on instead, under the fingerprint's lock; null for none. */
  private async duplicateOf(token: RebuiltToken): Promise<Token | null> {
    const { row, duplicateScope, now } = token;
    if (duplicateScope === null || row.fingerprint === null) {
      return null;
    }
    await this.tokens.lockFingerprints([row]);
    const key = { type: row.type, fingerprint: row.fingerprint };
    return this.tokens.findDuplicate(row.tenantId, key, duplicateScope, now, row.id);
  }

  private async presentSaved(principal: Principal, token: RebuiltToken): Promise<TokenDto> {
    const { row, next, transform } = token;
    const read = transformFor(principal, 'token:read', row.containers);
    return read === null
      ? presentUnreadable(row)
      : this.presentation.present(row, next.data, leastVisible(atMostMask(transform), read));
  }
}

/** The caller's write transform on the patched token; 403 when it may not make this change. */
function allowedUpdate(principal: Principal, current: TokenFields, next: TokenFields): Transform {
  const transform = writeTransform(principal, 'token:update', next.containers);
  if (transform === null) {
    throw ApiError.forbidden(
      `No access rule of this application grants token:update on ${eachOf(next.containers)}.`,
    );
  }
  const denied = patchDenial(principal, current, next);
  if (denied !== null) {
    throw ApiError.forbidden(denied);
  }
  return transform;
}
