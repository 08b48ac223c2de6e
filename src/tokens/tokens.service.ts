import { Injectable } from '@nestjs/common';
import { Transform } from '../access/access-rules';
import { atMostMask, containerScope, transformFor, uniformTransform, writeTransform } from '../access/access';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { Page, PageQueryDto, pageOf, pageOffset } from '../common/pagination';
import { ExpressionEngine } from '../expressions';
import { SearchTokensDto, TokenDto } from './dto/token.dto';
import { parseSearchQuery } from './search-query';
import { TokenBuilder } from './token-builder.service';
import { TokenCipher, WriteKeys } from './token-cipher.service';
import { readCreateRequest } from './token-fields';
import { TokenPresentation } from './token-presentation.service';
import { Token } from './token.entity';
import { DedupRateLimit } from './dedup-rate-limit';
import { duplicateScopeOf, PreparedToken, TokenInserter } from './token-inserter.service';
import { GoneToken, TokensRepository } from './tokens.repository';
import type { TokenListFilter } from './token-list.statements';
import { AuditService } from '../audit/audit.service';
import { auditEvent, tokensEvent } from '../audit/audit-event';
import { createdEvent, idsOf } from './token-audit';
import { Database } from '../database/database.service';
import { Events } from '../events/events';
import { EventType, VaultEvent } from '../events/event-types';
import { ClientKeysService } from '../client-keys/client-keys.service';

/** The time and the tenant's keys every token of one write (a /tokenize's 100) shares. */
export interface WriteBatch {
  now: Date;
  keys: () => Promise<WriteKeys>;
}

export type SearchFilter = Omit<TokenListFilter, 'scope' | 'offset' | 'limit'>;

/** Token creates, reads, lists, searches and deletes; updates are TokenUpdates'. */
@Injectable()
export class TokensService {
  constructor(
    private readonly tokens: TokensRepository,
    private readonly cipher: TokenCipher,
    private readonly builder: TokenBuilder,
    private readonly engine: ExpressionEngine,
    private readonly clock: Clock,
    private readonly dedup: DedupRateLimit,
    private readonly inserter: TokenInserter,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly presentation: TokenPresentation,
    private readonly db: Database,
    private readonly clientKeys: ClientKeysService,
  ) {}

  async create(principal: Principal, body: Record<string, unknown>): Promise<TokenDto> {
    await this.dedup.take(principal, body.deduplicate_token === true ? 1 : 0);
    const prepared = await this.prepare(principal, body);
    // The token, its index rows, its audit record and its event commit together (or none of them).
    const outcome = await this.inserter.insertOne(prepared, (inserted) => createdEvent(principal, inserted));
    return this.presentation.presentOutcome(principal, outcome);
  }

  /** What every token of one write shares: its time and the tenant's keys, looked up at most once. */
  writeBatch(tenantId: string): WriteBatch {
    let keys: Promise<WriteKeys> | undefined;
    return { now: this.clock.now(), keys: () => (keys ??= this.cipher.writeKeys(tenantId)) };
  }

  /** Validates, renders ids and fingerprints, checks token:create on the containers and encrypts: no writes. */
  async prepare(
    principal: Principal,
    body: Record<string, unknown>,
    prefix = '',
    batch: WriteBatch = this.writeBatch(principal.tenantId),
  ): Promise<PreparedToken> {
    const { now } = batch;
    const opened = await this.clientKeys.openTokenBody(principal.tenantId, body, prefix);
    const { fields, id: requestedId } = readCreateRequest(opened, this.engine, now, prefix);
    const transform = writeTransform(principal, 'token:create', fields.containers);
    if (transform === null) {
      throw ApiError.forbidden(
        `No access rule of this application grants token:create on ${eachOf(fields.containers)}.`,
      );
    }
    const identity = {
      tenantId: principal.tenantId,
      id: this.builder.tokenId(requestedId, fields, prefix),
      createdBy: principal.applicationId,
      createdAt: now,
      modifiedBy: null,
      modifiedAt: null,
    };
    const { row, indexHashes } = await this.builder.build(identity, fields, prefix, batch.keys);
    const duplicateScope =
      fields.deduplicateToken === true ? duplicateScopeOf(principal, 'token:create') : null;
    return { row, fields, indexHashes, transform: atMostMask(transform), duplicateScope };
  }

  async get(principal: Principal, id: string): Promise<TokenDto> {
    const uniform = uniformTransform(principal, 'token:read');
    if (uniform !== null) {
      const row = await this.findAudited(principal, id, uniform);
      if (row !== undefined) {
        return this.presentation.present(row, undefined, uniform);
      }
    }
    const { row, transform } = await this.findAllowed(principal, id, 'token:read');
    await this.audit.record(auditEvent(principal, 'token', row.id, 'read', `Token read (${transform})`));
    return this.presentation.present(row, undefined, transform);
  }

  async list(
    principal: Principal,
    query: PageQueryDto & { id?: string[]; type?: string[] },
    metadata: Record<string, string>,
  ): Promise<Page<TokenDto>> {
    const lowered = Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, v.toLowerCase()]));
    const page = await this.page(
      principal,
      'token:read',
      { ids: query.id, types: query.type, metadata: lowered },
      query,
    );
    await this.audit.record(tokensEvent(principal, 'list', 'Tokens listed', idsOf(page)));
    return page;
  }

  /** POST /tokens/search: blind-index, id, type and metadata terms, ANDed. */
  async search(principal: Principal, dto: SearchTokensDto): Promise<Page<TokenDto>> {
    const filter = await this.searchFilter(principal.tenantId, dto.query);
    const page =
      filter === null
        ? pageOf<TokenDto>([], 0, dto)
        : await this.page(principal, 'token:search', filter, dto);
    await this.audit.record(tokensEvent(principal, 'search', 'Tokens found', idsOf(page)));
    return page;
  }

  /** The filter of a search query (v1 and v2 alike); null when it can match nothing (two different ids). */
  async searchFilter(tenantId: string, query: string): Promise<SearchFilter | null> {
    const terms = parseSearchQuery(query);
    const ids = [...new Set(terms.ids)];
    if (ids.length > 1) {
      return null;
    }
    const indexHashes = await Promise.all(terms.data.map((v) => this.cipher.blindIndex(tenantId, v)));
    return {
      ids: ids.length === 1 ? ids : undefined,
      types: terms.types.length > 0 ? terms.types : undefined,
      metadata: terms.metadata,
      indexHashes,
    };
  }

  /** One page of live tokens the caller may see with `permission`, data per its transform. */
  private async page(
    principal: Principal,
    permission: Permission,
    filter: Omit<TokenListFilter, 'scope' | 'offset' | 'limit'>,
    query: PageQueryDto,
  ): Promise<Page<TokenDto>> {
    const scope = containerScope(principal, permission);
    if (scope !== 'all' && scope.length === 0) {
      return pageOf([], 0, query);
    }
    const [rows, total] = await this.tokens.list(
      principal.tenantId,
      { ...filter, scope, offset: pageOffset(query), limit: query.size },
      this.clock.now(),
    );
    const data = await this.presentation.presentRows(principal, permission, rows);
    return pageOf(data, total, query);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const { row } = await this.findAllowed(principal, id, 'token:delete');
    await this.db.transaction(async () => {
      const gone = await this.tokens.tombstone(principal.tenantId, row.id, this.clock.now());
      if (gone === null) {
        throw ApiError.notFound('Token');
      }
      await this.audit.record(auditEvent(principal, 'token', row.id, 'delete', 'Token deleted'));
      await this.events.publish(gone.tenant_id, 'token.deleted', { id: gone.id, type: gone.type });
    });
  }

  /** Tombstones every token past its expiry, batch by batch. */
  async purgeExpired(now: Date, batchSize = 500): Promise<number> {
    let total = 0;
    for (;;) {
      const purged = await this.db.transaction(async () => {
        const gone = await this.tokens.purgeExpiredBatch(now, batchSize);
        await this.events.publishAll(gone.map((token) => goneEvent(token, 'token.expired')));
        return gone.length;
      });
      total += purged;
      if (purged < batchSize) {
        return total;
      }
    }
  }

  /**
   * The token and the transform the caller gets for `permission` on it. 404 for unknown, deleted, expired
   * and other tenants' tokens; 403 when no access rule allows it.
   */
  async findAllowed(
    principal: Principal,
    id: string,
    permission: Permission,
    allows: typeof transformFor = transformFor,
  ): Promise<{ row: Token; transform: Transform }> {
    const row = await this.tokens.findLive(principal.tenantId, id, this.clock.now());
    if (row === null) {
      throw ApiError.notFound('Token');
    }
    const transform = allows(principal, permission, row.containers, row.id);
    if (transform === null) {
      throw ApiError.forbidden(`No access rule grants ${permission} on this token's containers.`);
    }
    return { row, transform };
  }

  /**
   * A read whose record is known before its token (the caller's transform is the same on every container):
   * the token and its record in one statement (TokensRepository.findLiveAudited). undefined when auditing is
   * off or the statement failed: get() then reads and records step by step.
   */
  private async findAudited(
    principal: Principal,
    id: string,
    transform: Transform,
  ): Promise<Token | undefined> {
    const record = this.audit.recordPart(
      auditEvent(principal, 'token', id, 'read', `Token read (${transform})`),
    );
    if (record === null) {
      return undefined;
    }
    const found = await this.tokens.findLiveAudited(principal.tenantId, [id], this.clock.now(), [record]);
    if (found === undefined) {
      return undefined;
    }
    if (found[0] === null) {
      throw ApiError.notFound('Token');
    }
    return found[0];
  }
}

/** One container as it is, several as "each of a, b": a write needs every one of them. */
export function eachOf(containers: readonly string[]): string {
  return containers.length === 1 ? containers[0] : `each of ${containers.join(', ')}`;
}

function goneEvent(token: GoneToken, type: EventType): VaultEvent {
  return { tenantId: token.tenant_id, type, subject: { id: token.id, type: token.type } };
}
