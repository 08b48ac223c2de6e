import type { EntityMetadata } from 'typeorm';
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

/** Columns a listed token is never presented with: the filters already applied them in SQL. */
const UNLISTED = new Set(['data_key_version', 'metadata_ci', 'deleted_at']);

/**
 * The SELECT list of a list page (tokens aliased `t`), each column `AS "property"` as entityColumns names it:
 * only what presenting a token reads, and `containers` as JSON, which JSON.parse reads in native code where
 * pg's text-array parser walks each character in JavaScript (the same strings either way).
 */
export function tokenListColumns(metadata: EntityMetadata): string {
  return metadata.columns
    .filter((c) => !UNLISTED.has(c.databaseName))
    .map((c) =>
      c.databaseName === 'containers'
        ? `to_json(t.containers) AS "${c.propertyName}"`
        : `t."${c.databaseName}" AS "${c.propertyName}"`,
    )
    .join(', ');
}

/** A list page's statement, and the count of all matches for a page past the end (where the page has no rows). */
export interface TokenListPageSql {
  text: string;
  values: unknown[];
  countText: string;
  countValues: unknown[];
}

/**
 * The page of a token list, newest first, with how many tokens match in all (`totalItems` on every row).
 *
 * With a metadata or blind-index filter the matches are found first (`matches`, MATERIALIZED: no LIMIT reaches
 * that scan) and the page is taken from them; every match is visited for the count anyway. Asked for the page
 * and the count in one plain query, the planner may walk the tenant's tokens in creation order expecting the
 * LIMIT to end the walk early; with these filters it misjudges how many match (a metadata value missing from
 * the column's statistics is estimated at 0.5 % of the table), and the walk read every token of the tenant,
 * hundreds of ms at 100,000 tokens, where the filter's own index finds them in well under one. Only the page's
 * rows are then read in full, by the address (ctid) of the row version the match was found in: the same
 * statement's snapshot sees that version and no other, so it is the row a primary-key lookup would find, without
 * descending the primary key once per row. The tenant and id are checked on that row too: a ctid names a row only
 * within one table, which a table split by tenant would no longer be. Without such a filter nearly every token matches, and walking them in
 * creation order is the plan that fits.
 */
export function tokenListPageSql(
  tenantId: string,
  filter: TokenListFilter,
  now: Date,
  columns: string,
): TokenListPageSql {
  const where = tokenListWhere(tenantId, filter, now);
  const countText = `SELECT count(*) AS total FROM tokens t WHERE ${where.text}`;
  const countValues = where.values.slice();
  const indexed = Object.keys(filter.metadata).length > 0 || (filter.indexHashes ?? []).length > 0;
  const text = indexed
    ? `WITH matches AS MATERIALIZED (SELECT t.created_at, t.id, t.ctid FROM tokens t WHERE ${where.text}),
      page AS (SELECT created_at, id, ctid FROM matches ORDER BY created_at DESC, id ASC
        OFFSET ${where.param(filter.offset)} LIMIT ${where.param(filter.limit)})
      SELECT ${columns}, (SELECT count(*) FROM matches) AS "totalItems"
      FROM page JOIN tokens t
        ON t.ctid = page.ctid AND t.tenant_id = ${where.param(tenantId)} AND t.id = page.id
      ORDER BY page.created_at DESC, page.id ASC`
    : `SELECT ${columns}, count(*) OVER () AS "totalItems" FROM tokens t WHERE ${where.text}
      ORDER BY t.created_at DESC, t.id ASC OFFSET ${where.param(filter.offset)} LIMIT ${where.param(filter.limit)}`;
  return { text, values: where.values, countText, countValues };
}
