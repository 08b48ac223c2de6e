import type { Transform } from '../access/access-rules';
import { TokenDto } from './dto/token.dto';
import { Token } from './token.entity';

export interface TokenView {
  transform: Transform;
  /** Raw data: present only when the caller may see it. */
  data?: unknown;
  /** The evaluated mask, when the token has one and the caller may see it. */
  mask?: unknown;
  deduplicated?: boolean;
}

/** The response shape of a token (spec §2.1), with data per the caller's transform. */
export function presentToken(row: Token, view: TokenView): TokenDto {
  const dto: TokenDto = {
    id: row.id,
    tenant_id: row.tenantId,
    type: row.type,
    fingerprint: row.fingerprint,
    fingerprint_expression: row.fingerprintExpression,
    containers: row.containers,
    metadata: row.metadata,
    search_indexes: row.searchIndexes,
    deduplicate_token: row.deduplicateToken,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    modified_by: row.modifiedBy,
    modified_at: row.modifiedAt?.toISOString() ?? null,
    expires_at: row.expiresAt?.toISOString() ?? null,
  };
  if (view.transform === 'reveal') {
    dto.data = view.data;
  } else if (view.transform === 'mask' && view.mask !== undefined) {
    dto.data = view.mask;
  }
  if (view.transform !== 'redact' && view.mask !== undefined) {
    dto.mask = view.mask;
  }
  if (view.deduplicated === true) {
    dto._extras = { deduplicated: true };
  }
  return dto;
}

/**
 * A token the caller wrote but may not read (token:update without token:read): where it is and who wrote
 * it, nothing derived from its data (no data, mask, fingerprint, metadata, expressions, expiry).
 */
export function presentUnreadable(row: Token): TokenDto {
  return {
    id: row.id,
    tenant_id: row.tenantId,
    type: row.type,
    containers: row.containers,
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
    modified_by: row.modifiedBy,
    modified_at: row.modifiedAt?.toISOString() ?? null,
  };
}
