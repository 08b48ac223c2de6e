import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Brackets, EntityManager, Repository, SelectQueryBuilder } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Token } from './token.entity';

export interface TokenListFilter {
  ids?: string[];
  types?: string[];
  /** lower-cased values, ANDed */
  metadata: Record<string, string>;
  /** blind index hashes the token must all have */
  indexHashes?: string[];
  /** container prefixes the caller may read, or 'all' */
  scope: 'all' | string[];
  offset: number;
  limit: number;
}

/** Columns cleared when a token is deleted or purged: nothing derived from its data survives. */
const TOMBSTONE_SQL = `data = NULL, data_key_version = NULL, mask = NULL, fingerprint = NULL, fingerprint_expression = NULL, containers = '{}',
  metadata = NULL, metadata_ci = NULL, search_indexes = NULL`;

/** TypeORM returns [rows, count] for a bare UPDATE ... RETURNING on postgres, rows for a SELECT. */
function affected(result: unknown[]): number {
  return Array.isArray(result[0]) ? result[0].length : result.length;
}

/** Every query takes the tenant id first; "live" means not deleted and not expired at `now`. */
@Injectable()
export class TokensRepository {
  constructor(@InjectRepository(Token) private readonly tokens: Repository<Token>) {}

  get manager(): EntityManager {
    return this.tokens.manager;
  }

  findLive(tenantId: string, id: string, now: Date, manager: EntityManager = this.tokens.manager): Promise<Token | null> {
    return live(manager.createQueryBuilder(Token, 't'), now)
      .andWhere('t.tenant_id = :tenantId AND t.id = :id', { tenantId, id })
      .getOne();
  }

  findLiveMany(tenantId: string, ids: string[], now: Date): Promise<Token[]> {
    if (ids.length === 0) {
      return Promise.resolve([]);
    }
    return live(this.tokens.createQueryBuilder('t'), now)
      .andWhere('t.tenant_id = :tenantId AND t.id IN (:...ids)', { tenantId, ids })
      .getMany();
  }

  findDuplicate(manager: EntityManager, tenantId: string, type: string, fingerprint: string, now: Date, exceptId?: string): Promise<Token | null> {
    const query = live(manager.createQueryBuilder(Token, 't'), now)
      .andWhere('t.tenant_id = :tenantId AND t.type = :type AND t.fingerprint = :fingerprint', { tenantId, type, fingerprint })
      .orderBy('t.created_at', 'ASC')
      .limit(1);
    if (exceptId !== undefined) {
      query.andWhere('t.id <> :exceptId', { exceptId });
    }
    return query.getOne();
  }

  /** Serializes deduplicating writes of one fingerprint across connections and replicas. */
  async lockFingerprint(manager: EntityManager, tenantId: string, type: string, fingerprint: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`token:${tenantId}:${type}:${fingerprint}`]);
  }

  async list(tenantId: string, filter: TokenListFilter, now: Date): Promise<[Token[], number]> {
    const query = live(this.tokens.createQueryBuilder('t'), now).andWhere('t.tenant_id = :tenantId', { tenantId });
    if (filter.ids !== undefined) {
      query.andWhere('t.id IN (:...ids)', { ids: filter.ids });
    }
    if (filter.types !== undefined) {
      query.andWhere('t.type IN (:...types)', { types: filter.types });
    }
    if (Object.keys(filter.metadata).length > 0) {
      query.andWhere('t.metadata_ci @> :metadata::jsonb', { metadata: JSON.stringify(filter.metadata) });
    }
    (filter.indexHashes ?? []).forEach((hash, i) => {
      query.andWhere(
        `EXISTS (SELECT 1 FROM token_search_indexes i${i} WHERE i${i}.tenant_id = t.tenant_id AND i${i}.token_id = t.id AND i${i}.hash = :hash${i})`,
        { [`hash${i}`]: hash },
      );
    });
    if (filter.scope !== 'all') {
      const prefixes = filter.scope.map((c) => `${c.replace(/[\\%_]/g, (m) => `\\${m}`)}%`);
      query.andWhere('EXISTS (SELECT 1 FROM unnest(t.containers) AS c WHERE c LIKE ANY(:prefixes))', { prefixes });
    }
    return query.orderBy('t.created_at', 'DESC').addOrderBy('t.id', 'ASC').skip(filter.offset).take(filter.limit).getManyAndCount();
  }

  /** One INSERT for all the tokens and one for all their blind indexes. */
  async insert(manager: EntityManager, tokens: { row: Token; indexHashes: string[] }[]): Promise<void> {
    await manager.insert(Token, tokens.map((t) => t.row) as QueryDeepPartialEntity<Token>[]);
    await this.insertIndexes(manager, tokens);
  }

  /**
   * Writes an updated token only if its ciphertext is still `expected` (compare-and-swap), so a concurrent
   * update or delete is never overwritten. Returns false when the row changed meanwhile.
   */
  async save(manager: EntityManager, token: Token, indexHashes: string[], expected: Buffer): Promise<boolean> {
    const { tenantId, id, ...columns } = token;
    const result = await manager
      .createQueryBuilder()
      .update(Token)
      .set(columns)
      .where('tenant_id = :tenantId AND id = :id AND data = :expected AND deleted_at IS NULL', { tenantId, id, expected })
      .execute();
    if (result.affected !== 1) {
      return false;
    }
    await manager.query('DELETE FROM token_search_indexes WHERE tenant_id = $1 AND token_id = $2', [tenantId, id]);
    await this.insertIndexes(manager, [{ row: token, indexHashes }]);
    return true;
  }

  private async insertIndexes(manager: EntityManager, tokens: { row: Token; indexHashes: string[] }[]): Promise<void> {
    const rows = tokens.flatMap((t) => t.indexHashes.map((hash) => [t.row.tenantId, hash, t.row.id]));
    if (rows.length === 0) {
      return;
    }
    const placeholders = rows.map((_, i) => `($${i * 3 + 1}, $${i * 3 + 2}, $${i * 3 + 3})`).join(', ');
    await manager.query(`INSERT INTO token_search_indexes (tenant_id, hash, token_id) VALUES ${placeholders}`, rows.flat());
  }

  /** Deletes the data for good and keeps the row as an audit reference. */
  async tombstone(tenantId: string, id: string, now: Date): Promise<boolean> {
    const rows: unknown[] = await this.tokens.query(
      `WITH gone AS (
         UPDATE tokens SET ${TOMBSTONE_SQL}, deleted_at = $3
         WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $3)
         RETURNING tenant_id, id),
       unindexed AS (
         DELETE FROM token_search_indexes i USING gone WHERE i.tenant_id = gone.tenant_id AND i.token_id = gone.id)
       SELECT 1 FROM gone`,
      [tenantId, id, now],
    );
    return affected(rows) > 0;
  }

  /**
   * Tombstones one batch of tokens whose expiry has passed; SKIP LOCKED lets replicas share the work.
   * Returns how many rows it purged.
   */
  async purgeExpiredBatch(now: Date, batchSize: number): Promise<number> {
    const rows: unknown[] = await this.tokens.query(
      `WITH gone AS (
         UPDATE tokens SET ${TOMBSTONE_SQL}, deleted_at = $1
         WHERE (tenant_id, id) IN (
           SELECT tenant_id, id FROM tokens
           WHERE deleted_at IS NULL AND expires_at IS NOT NULL AND expires_at <= $1
           LIMIT $2 FOR UPDATE SKIP LOCKED)
         RETURNING tenant_id, id),
       unindexed AS (
         DELETE FROM token_search_indexes i USING gone WHERE i.tenant_id = gone.tenant_id AND i.token_id = gone.id)
       SELECT 1 FROM gone`,
      [now, batchSize],
    );
    return affected(rows);
  }
}

function live(query: SelectQueryBuilder<Token>, now: Date): SelectQueryBuilder<Token> {
  return query
    .where('t.deleted_at IS NULL')
    .andWhere(new Brackets((q) => q.where('t.expires_at IS NULL').orWhere('t.expires_at > :now', { now })));
}
