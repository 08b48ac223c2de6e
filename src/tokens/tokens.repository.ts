import { Injectable } from '@nestjs/common';
import { Brackets, SelectQueryBuilder } from 'typeorm';
import type { AuditPart } from '../audit/audit.service';
import { WriteCounter } from './write-counter';
import { composeStatement, StatementPart } from '../database/composed-statement';
import { Database } from '../database/database.service';
import { entityColumns } from '../database/entity-columns';
import { AuditedReads } from './audited-reads.statements';
import { PrimaryKeyReads } from './primary-key-reads.statements';
import {
  likePrefixes,
  TokenListFilter,
  tokenListColumns,
  tokenListPageSql,
  tokenListWhere,
} from './token-list.statements';
import { Token } from './token.entity';
import { indexPart, insertPart } from './token-insert.statements';

/** Where a caller may find a duplicate: container prefixes it may read and write, or 'all'. */
export interface DuplicateScope {
  read: 'all' | string[];
  write: 'all' | string[];
}

/** Where a keyset page starts: after this token in (created_at DESC, id ASC) order. */
export interface KeysetPosition {
  /** created_at as PostgreSQL prints it, to the microsecond (a JS Date keeps only milliseconds) */
  createdAt: string;
  id: string;
}

/** Columns cleared when a token is deleted or purged: nothing derived from its data survives. */
const TOMBSTONE_SQL = `data = NULL, data_key_version = NULL, mask = NULL, fingerprint = NULL, fingerprint_expression = NULL, containers = '{}',
  metadata = NULL, metadata_ci = NULL, search_indexes = NULL`;

/** A token a delete or the purge just tombstoned. */
export interface GoneToken {
  tenant_id: string;
  id: string;
  type: string;
}

/**
 * What a detokenization shows of a token it presents as data only (TokenPresentation.presentedData): a read that
 * hands over no whole token reads only these columns.
 */
export type TokenData = Pick<Token, 'tenantId' | 'id' | 'data' | 'mask'>;
const TOKEN_DATA_PROPERTIES: readonly (keyof TokenData)[] = ['tenantId', 'id', 'data', 'mask'];

/** Every query takes the tenant id first; "live" means not deleted and not expired at `now`. */
@Injectable()
export class TokensRepository {
  /** Every column as `column AS "property"`: a plain SQL row then already has the entity's shape. */
  private readonly columns: string;
  /** What a list statement reads of the alias `t` (tokenListColumns). */
  private readonly aliasedColumns: string;
  private readonly primaryKeyReads: PrimaryKeyReads;
  private readonly auditedReads: AuditedReads;
  private readonly auditedDataReads: AuditedReads;

  constructor(
    private readonly db: Database,
    private readonly writes: WriteCounter,
  ) {
    const metadata = db.source.getMetadata(Token);
    this.columns = entityColumns(metadata);
    this.aliasedColumns = tokenListColumns(metadata);
    const query = (name: string, text: string, values: unknown[]): Promise<Record<string, unknown>[]> =>
      db.prepared(name, text, values);
    const batcher = db.batcher.bind(db);
    this.primaryKeyReads = new PrimaryKeyReads(query, batcher, this.columns);
    this.auditedReads = new AuditedReads(query, batcher, this.columns, 'tokens.find-live-audited');
    this.auditedDataReads = new AuditedReads(
      query,
      batcher,
      entityColumns(metadata, undefined, TOKEN_DATA_PROPERTIES),
      'tokens.find-live-data-audited',
    );
  }

  /**
   * By primary key only, liveness checked here: a `deleted_at IS NULL` condition in SQL lets the planner
   * pick a partial index and scan the whole tenant when statistics are stale. A plain prepared statement: this is
   * the hot read, and TypeORM's find costs several times more to build and hydrate the same query.
   */
  async findLive(tenantId: string, id: string, now: Date): Promise<Token | null> {
    const found = await this.primaryKeyReads.find(tenantId, id);
    if (found === undefined) {
      return null;
    }
    const row = Object.assign(new Token(), found);
    return isLive(row, now) ? row : null;
  }

  /**
   * findLive() of each of `ids` (null for one not live) that also writes `records` in the same statement when
   * every one is live (AuditedReads.findAll): one round trip for the read and its durable audit records.
   * undefined when the caller is to read and record step by step.
   */
  async findLiveAudited(
    tenantId: string,
    ids: readonly string[],
    now: Date,
    records: readonly AuditPart[],
  ): Promise<(Token | null)[] | undefined> {
    const found = await this.auditedReads.findAll(tenantId, ids, records, now);
    return found?.map((row) => (row === null ? null : Object.assign(new Token(), row)));
  }

  /**
   * findLiveAudited() reading only what a token shown as data needs (TokenData): a detokenization that hands
   * over no whole token parses a quarter of the columns.
   */
  async findLiveDataAudited(
    tenantId: string,
    ids: readonly string[],
    now: Date,
    records: readonly AuditPart[],
  ): Promise<(TokenData | null)[] | undefined> {
    return (await this.auditedDataReads.findAll(tenantId, ids, records, now)) as
      (TokenData | null)[] | undefined;
  }

  /**
   * The live ones of `ids` (a detokenization's): read by primary key as findLive reads, in one statement
   * shared with the reads of other requests that arrive meanwhile.
   */
  async findLiveMany(tenantId: string, ids: string[], now: Date): Promise<Token[]> {
    if (ids.length === 0) {
      return [];
    }
    const rows: Token[] = [];
    for (const found of await this.primaryKeyReads.findMany(tenantId, ids)) {
      if (found !== undefined) {
        const row = Object.assign(new Token(), found);
        if (isLive(row, now)) {
          rows.push(row);
        }
      }
    }
    return rows;
  }

  /**
   * The oldest live token of this type and fingerprint the caller may deduplicate onto: one it may read
   * (some container in `scope.read`) and write (every container in `scope.write`).
   */
  findDuplicate(
    tenantId: string,
    key: { type: string; fingerprint: string },
    scope: DuplicateScope,
    now: Date,
    exceptId?: string,
  ): Promise<Token | null> {
    const query = live(this.db.repository(Token).createQueryBuilder('t'), now)
      .andWhere('t.tenant_id = :tenantId AND t.type = :type AND t.fingerprint = :fingerprint', {
        tenantId,
        ...key,
      })
      .orderBy('t.created_at', 'ASC')
      .limit(1);
    if (scope.read !== 'all') {
      query.andWhere('EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE c LIKE ANY(:readable))', {
        readable: likePrefixes(scope.read),
      });
    }
    if (scope.write !== 'all') {
      query.andWhere(
        'NOT EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE NOT (c LIKE ANY(:writable)))',
        { writable: likePrefixes(scope.write) },
      );
    }
    if (exceptId !== undefined) {
      query.andWhere('t.id <> :exceptId', { exceptId });
    }
    return query.getOne();
  }

  /**
   * Serializes deduplicating writes of each fingerprint across connections and replicas. Several locks are
   * taken in ascending order of their lock key, so two writers of the same fingerprints never deadlock.
   */
  async lockFingerprints(tokens: Token[]): Promise<void> {
    const names = [...new Set(tokens.map((t) => `token:${t.tenantId}:${t.type}:${t.fingerprint}`))];
    if (names.length === 0) {
      return;
    }
    if (names.length === 1) {
      await this.db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', names);
      return;
    }
    const rows = await this.db.query<{ h: string }>(
      'SELECT DISTINCT hashtextextended(k, 0)::text AS h FROM unnest($1::text[]) AS k',
      [names],
    );
    const ordered = rows.map((r) => BigInt(r.h)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    for (const lockKey of ordered) {
      await this.db.query('SELECT pg_advisory_xact_lock($1::bigint)', [lockKey.toString()]);
    }
  }

  /**
   * A page of the live tokens matching the filter and the caller's container scope, newest first, and how
   * many match in all. One statement for both; only a page past the end needs a separate count.
   */
  async list(tenantId: string, filter: TokenListFilter, now: Date): Promise<[Token[], number]> {
    const page = tokenListPageSql(tenantId, filter, now, this.aliasedColumns);
    const rows = await this.plainQuery<{ totalItems: string }>(page.text, page.values);
    if (rows.length > 0) {
      // Each row already has the entity's shape (and totalItems, which nothing presents): not copied again.
      return [rows as Token[], Number(rows[0].totalItems)];
    }
    if (filter.offset === 0) {
      return [[], 0];
    }
    const [{ total }] = await this.plainQuery<{ total: string }>(page.countText, page.countValues);
    return [[], Number(total)];
  }

  /**
   * A keyset page: up to `limit` tokens after `after` in (created_at DESC, id ASC) order, each with its
   * position. `created_at <= :at` bounds the index scan, so a page deep into millions of tokens costs what
   * the first one does; tokens created meanwhile sort before every cursor and never shift a later page.
   */
  async listAfter(
    tenantId: string,
    filter: Omit<TokenListFilter, 'offset' | 'limit'>,
    after: KeysetPosition | null,
    limit: number,
    now: Date,
  ): Promise<{ row: Token; position: KeysetPosition }[]> {
    const where = tokenListWhere(tenantId, filter, now);
    if (after !== null) {
      const at = where.param(after.createdAt);
      where.and(`t.created_at <= ${at}::timestamptz`);
      where.and(`(t.created_at < ${at}::timestamptz OR t.id > ${where.param(after.id)})`);
    }
    const rows = await this.plainQuery<{ positionAt: string }>(
      `SELECT ${this.aliasedColumns},
         to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS "positionAt"
       FROM tokens t WHERE ${where.text} ORDER BY t.created_at DESC, t.id ASC LIMIT ${where.param(limit)}`,
      where.values,
    );
    return rows.map((row) => ({
      row: row as Token,
      position: { createdAt: row.positionAt, id: row.id as string },
    }));
  }

  /**
   * An unnamed statement: the planner sees each list's values (a generic plan of a filter's many shapes
   * could pick a bad index for one tenant's selectivity).
   */
  private plainQuery<T extends object>(text: string, values: unknown[]): Promise<(T & Partial<Token>)[]> {
    return this.db.query<T & Partial<Token>>(text, values);
  }

  /** One INSERT for all the tokens, whatever their count, and one for all their blind indexes. */
  async insert(tokens: { row: Token; indexHashes: string[] }[]): Promise<void> {
    if (tokens.length === 0) {
      return;
    }
    const rows = insertPart(tokens);
    await this.db.prepared(rows.name, rows.text, rows.values);
    await this.insertIndexes(tokens);
    this.writes.add(tokens.length);
  }

  /**
   * New tokens with `also` (their outbox and audit rows) as one statement (composeStatement): atomic
   * without a transaction, one round trip where the step-by-step insert in a transaction takes five or six.
   */
  async insertWith(tokens: { row: Token; indexHashes: string[] }[], also: StatementPart[]): Promise<void> {
    const parts: StatementPart[] = tokens.length === 0 ? [] : [insertPart(tokens)];
    const indexes = indexPart(tokens);
    if (indexes !== null) {
      parts.push(indexes);
    }
    parts.push(...also);
    if (parts.length === 0) {
      return;
    }
    const statement = composeStatement(parts);
    await this.db.prepared(statement.name, statement.text, statement.values);
    this.writes.add(tokens.length);
  }

  /**
   * Writes an updated token only if its ciphertext is still `expected` (compare-and-swap), so a concurrent
   * update or delete is never overwritten. Returns false when the row changed meanwhile.
   */
  async save(token: Token, indexHashes: string[], expected: Buffer): Promise<boolean> {
    const { tenantId, id, ...columns } = token;
    const result = await this.db.manager
      .createQueryBuilder()
      .update(Token)
      .set(columns)
      .where('tenant_id = :tenantId AND id = :id AND data = :expected AND deleted_at IS NULL', {
        tenantId,
        id,
        expected,
      })
      .execute();
    if (result.affected !== 1) {
      return false;
    }
    await this.db.execute('DELETE FROM token_search_indexes WHERE tenant_id = $1 AND token_id = $2', [
      tenantId,
      id,
    ]);
    await this.insertIndexes([{ row: token, indexHashes }]);
    return true;
  }

  private async insertIndexes(tokens: { row: Token; indexHashes: string[] }[]): Promise<void> {
    const part = indexPart(tokens);
    if (part !== null) {
      await this.db.prepared(part.name, part.text, part.values);
    }
  }

  /** Deletes the data for good and keeps the row as an audit reference. */
  async tombstone(tenantId: string, id: string, now: Date): Promise<GoneToken | null> {
    const [gone] = await this.db.query<GoneToken>(
      `WITH gone AS (
         UPDATE tokens SET ${TOMBSTONE_SQL}, deleted_at = $3
         WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
         RETURNING tenant_id, id, type),
       unindexed AS (
         DELETE FROM token_search_indexes i USING gone WHERE i.tenant_id = gone.tenant_id AND i.token_id = gone.id)
       SELECT tenant_id, id, type FROM gone`,
      [tenantId, id, now],
    );
    return gone ?? null;
  }

  /**
   * Tombstones one batch of tokens whose expiry has passed; SKIP LOCKED lets replicas share the work.
   * Returns how many rows it purged.
   */
  purgeExpiredBatch(now: Date, batchSize: number): Promise<GoneToken[]> {
    return this.db.query<GoneToken>(
      `WITH gone AS (
         UPDATE tokens SET ${TOMBSTONE_SQL}, deleted_at = $1
         WHERE (tenant_id, id) IN (
           SELECT tenant_id, id FROM tokens
           WHERE deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $1
           LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING tenant_id, id, type),
       unindexed AS (
         DELETE FROM token_search_indexes i USING gone WHERE i.tenant_id = gone.tenant_id AND i.token_id = gone.id)
       SELECT tenant_id, id, type FROM gone`,
      [now, batchSize],
    );
  }

  /**
   * Up to `limit` of the tenant's tokens after `after` in id order whose ciphertext is sealed under a data key
   * older than `latest`: a walk along the primary key, so no index on the key version is needed.
   */
  findSealedBefore(
    tenantId: string,
    latest: number,
    after: string,
    limit: number,
  ): Promise<Pick<Token, 'tenantId' | 'id' | 'data'>[]> {
    return this.db
      .repository(Token)
      .createQueryBuilder('t')
      .select(['t.tenantId', 't.id', 't.data'])
      .where('t.tenant_id = :tenantId AND t.id > :after', { tenantId, after })
      .andWhere('t.data IS NOT NULL AND t.data_key_version < :latest', { latest })
      .orderBy('t.id')
      .limit(limit)
      .getMany();
  }

  /** Swaps the token's ciphertext for `sealed` only if it is still `expected`; false when it changed meanwhile. */
  async reseal(
    tenantId: string,
    id: string,
    expected: Buffer,
    sealed: { blob: Buffer; version: number },
  ): Promise<boolean> {
    const swapped = await this.db.execute(
      `UPDATE tokens SET data = $1, data_key_version = $2
       WHERE tenant_id = $3 AND id = $4 AND data = $5`,
      [sealed.blob, sealed.version, tenantId, id, expected],
    );
    return swapped > 0;
  }
}

function live(query: SelectQueryBuilder<Token>, now: Date): SelectQueryBuilder<Token> {
  return query
    .where('t.deleted_at IS NULL')
    .andWhere(new Brackets((q) => q.where('t.expires_at IS NULL').orWhere('t.expires_at > :now', { now })));
}

function isLive(row: Token, now: Date): boolean {
  return row.deletedAt === null && (row.expiresAt === null || row.expiresAt > now);
}
