import { WhereClause } from '../database/where-clause';

export interface TokenListFilter {
  ids?: string[];
  types?: string[];
  /** lower-cased values, ANDed */
  metadata: Record<string, string>;
  /** blind index hashes the token must all have */
  indexHashes?: string[];
  /** container prefixes the caller may read, or 'all' */
  scope: 'all' | string[];
  /** v2 filters: a container prefix and a fingerprint */
  container?: string;
  fingerprint?: string;
  offset: number;
  limit: number;
}

/** LIKE patterns matching every container under one of the prefixes. */
export function likePrefixes(prefixes: string[]): string[] {
  return prefixes.map((c) => `${c.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
}

/**
 * The WHERE clause of a token list (tokens aliased `t`), as plain SQL: a list page was built and hydrated by
 * TypeORM's query builder, which cost more of the vault's CPU than decrypting the page. Conditions: live at
 * `now`, the tenant, every filter ANDed, and the caller's container scope; the text depends only on which
 * filters are present (and how many blind-index hashes).
 */
export function tokenListWhere(
  tenantId: string,
  filter: Omit<TokenListFilter, 'offset' | 'limit'>,
  now: Date,
): WhereClause {
  const where = new WhereClause();
  where.and('t.deleted_at IS NULL').and(`(t.expires_at IS NULL OR t.expires_at > ${where.param(now)})`);
  where.andIf('t.tenant_id', '=', tenantId);
  if (filter.ids !== undefined) {
    where.and(`t.id = ANY(${where.param(filter.ids)}::text[])`);
  }
  if (filter.types !== undefined) {
    where.and(`t.type = ANY(${where.param(filter.types)}::text[])`);
  }
  if (Object.keys(filter.metadata).length > 0) {
    where.and(`t.metadata_ci @> ${where.param(JSON.stringify(filter.metadata))}::jsonb`);
  }
  (filter.indexHashes ?? []).forEach((hash, i) => {
    where.and(
      `EXISTS (SELECT 1 FROM token_search_indexes i${i} WHERE i${i}.tenant_id = t.tenant_id AND i${i}.token_id = t.id AND i${i}.hash = ${where.param(hash)})`,
    );
  });
  if (filter.container !== undefined) {
    const pattern = where.param(likePrefixes([filter.container])[0]);
    where.and(`EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE c LIKE ${pattern})`);
  }
  where.andIf('t.fingerprint', '=', filter.fingerprint);
  if (filter.scope !== 'all') {
    const patterns = where.param(likePrefixes(filter.scope));
    where.and(`EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE c LIKE ANY(${patterns}::text[]))`);
  }
  return where;
}
