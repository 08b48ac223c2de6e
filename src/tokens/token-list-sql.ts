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
 * The WHERE clause of a token list (tokens aliased `t`) and its parameters, as plain SQL: a list page was
 * built and hydrated by TypeORM's query builder, which cost more of the vault's CPU than decrypting the page.
 * Every value is a parameter; the text depends only on which filters are present (and how many blind-index
 * hashes), never on their values. Conditions: live at `now`, the tenant, every filter ANDed, and the caller's
 * container scope.
 */
export class TokenListSql {
  readonly values: unknown[] = [];
  private readonly conditions: string[] = [];

  constructor(tenantId: string, filter: Omit<TokenListFilter, 'offset' | 'limit'>, now: Date) {
    const n = this.param(now);
    this.conditions.push('t.deleted_at IS NULL', `(t.expires_at IS NULL OR t.expires_at > ${n})`);
    this.conditions.push(`t.tenant_id = ${this.param(tenantId)}`);
    if (filter.ids !== undefined) {
      this.conditions.push(`t.id = ANY(${this.param(filter.ids)}::text[])`);
    }
    if (filter.types !== undefined) {
      this.conditions.push(`t.type = ANY(${this.param(filter.types)}::text[])`);
    }
    if (Object.keys(filter.metadata).length > 0) {
      this.conditions.push(`t.metadata_ci @> ${this.param(JSON.stringify(filter.metadata))}::jsonb`);
    }
    (filter.indexHashes ?? []).forEach((hash, i) => {
      this.conditions.push(
        `EXISTS (SELECT 1 FROM token_search_indexes i${i} WHERE i${i}.tenant_id = t.tenant_id AND i${i}.token_id = t.id AND i${i}.hash = ${this.param(hash)})`,
      );
    });
    if (filter.container !== undefined) {
      const pattern = this.param(likePrefixes([filter.container])[0]);
      this.conditions.push(`EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE c LIKE ${pattern})`);
    }
    if (filter.fingerprint !== undefined) {
      this.conditions.push(`t.fingerprint = ${this.param(filter.fingerprint)}`);
    }
    if (filter.scope !== 'all') {
      const patterns = this.param(likePrefixes(filter.scope));
      this.conditions.push(
        `EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE c LIKE ANY(${patterns}::text[]))`,
      );
    }
  }

  /** Adds a value and answers its placeholder ($1, $2, ...). */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** Adds a condition (its values already added with param). */
  and(condition: string): this {
    this.conditions.push(condition);
    return this;
  }

  get where(): string {
    return this.conditions.join(' AND ');
  }
}
