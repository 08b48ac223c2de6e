import { Injectable } from '@nestjs/common';
import { containerScope } from '../access/access';
import { normalizeRuleContainer } from '../access/containers';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { ListTokensV2QueryDto, SearchTokensV2Dto, TokenCursorPageDto } from './dto/token-v2.dto';
import { CursorSigner, decodeCursor, encodeCursor, listingDigest } from './token-cursor';
import { TokenCipher } from './token-cipher.service';
import { TokensRepository } from './tokens.repository';
import { AuditService } from '../audit/audit.service';
import { auditEvent, tokensEvent } from '../audit/audit-event';
import { idsOf } from './token-audit';
import { TokenPresentation } from './token-presentation.service';
import { SearchFilter, TokensService } from './tokens.service';

/**
 * GET /v2/tokens and POST /v2/tokens/search: the v1 filters, access rules and masking, paged by keyset with
 * signed cursors instead of page numbers (no count, no OFFSET: deep pages cost what the first does).
 */
@Injectable()
export class TokensV2Service {
  constructor(
    private readonly tokens: TokensService,
    private readonly presentation: TokenPresentation,
    private readonly repository: TokensRepository,
    private readonly cipher: TokenCipher,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  list(principal: Principal, query: ListTokensV2QueryDto): Promise<TokenCursorPageDto> {
    const container = query.container === undefined ? undefined : normalizeRuleContainer(query.container);
    if (container === null) {
      throw ApiError.field('container', 'must be a container path such as /pci/');
    }
    const filter: SearchFilter = {
      types: query.type === undefined ? undefined : [query.type],
      metadata: parseMetadata(query.metadata),
      container: container === '/' ? undefined : container,
      fingerprint: query.fingerprint,
    };
    return this.page(principal, 'token:read', filter, query);
  }

  async search(principal: Principal, dto: SearchTokensV2Dto): Promise<TokenCursorPageDto> {
    const text = dto.query?.trim() ?? '';
    const filter = text === '' ? { metadata: {} } : await this.tokens.searchFilter(principal.tenantId, text);
    return this.page(principal, 'token:search', filter, dto);
  }

  private async page(
    principal: Principal,
    permission: Permission,
    filter: SearchFilter | null,
    query: { start?: string; size: number },
  ): Promise<TokenCursorPageDto> {
    const signer: CursorSigner = {
      sign: (payload) => this.cipher.cursorSignature(principal.tenantId, payload),
    };
    const listing = listingDigest({ permission, filter });
    const after =
      query.start === undefined ? null : await decodeCursor(signer, listing, query.start, 'start');
    const scope = containerScope(principal, permission);
    if (filter === null || (scope !== 'all' && scope.length === 0)) {
      const operation = permission === 'token:search' ? 'search' : 'list';
      await this.audit.record(auditEvent(principal, 'token', null, operation, 'No tokens visible'));
      return { pagination: { page_size: query.size, next: null }, data: [] };
    }
    const found = await this.repository.listAfter(
      principal.tenantId,
      { ...filter, scope },
      after,
      query.size + 1,
      this.clock.now(),
    );
    const rows = found.slice(0, query.size);
    const last = rows.at(-1);
    const next =
      found.length > query.size && last !== undefined
        ? await encodeCursor(signer, listing, last.position)
        : null;
    const data = await this.presentation.presentRows(
      principal,
      permission,
      rows.map((r) => r.row),
    );
    const [operation, message] =
      permission === 'token:search' ? ['search', 'Tokens found'] : ['list', 'Tokens listed'];
    await this.audit.record(tokensEvent(principal, operation, message, idsOf({ data })));
    return { pagination: { page_size: query.size, next }, data };
  }
}

/** `metadata` as the SDK sends it: a JSON object of string values (lower-cased like the v1 filter). */
function parseMetadata(raw: string | undefined): Record<string, string> {
  if (raw === undefined) {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw ApiError.field('metadata', 'must be a JSON object of string values');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw ApiError.field('metadata', 'must be a JSON object of string values');
  }
  const entries = Object.entries(parsed);
  if (entries.length > 20 || entries.some(([, v]) => typeof v !== 'string')) {
    throw ApiError.field('metadata', 'must be a JSON object of at most 20 string values');
  }
  const lowered: Record<string, string> = {};
  for (const [key, value] of entries as [string, string][]) {
    Object.defineProperty(lowered, key, {
      value: value.toLowerCase(),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return lowered;
}
