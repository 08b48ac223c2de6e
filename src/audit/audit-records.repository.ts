import { Injectable } from '@nestjs/common';
import { pageOffset } from '../common/pagination';
import { Database } from '../database/database.service';
import type { Statement } from '../database/prepared-query';
import { WhereClause } from '../database/where-clause';
import { readRecordColumns, recordColumns } from './audit-event';
import type { AuditRow } from './audit-event';
import type { ListLogsQueryDto } from './dto/log.dto';

/** INSERT's rows, many at once: one array per column, in INSERT's order (token_ids joined into one text). */
const INSERT_MANY = `INSERT INTO audit_records (${recordColumns()})
  SELECT c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, string_to_array(c14, chr(31))
  FROM unnest($1::uuid[], $2::uuid[], $3::timestamptz[], $4::uuid[], $5::text[], $6::text[], $7::text[],
    $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[])
    AS r(c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11, c12, c13, c14)`;

const INSERT = `INSERT INTO audit_records (${recordColumns()})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, string_to_array($14, chr(31)))`;

/** A record's values in recordColumns() order (its token ids joined into one text); the first is the tenant. */
export type RecordValues = unknown[];

/** The sealer's cursor: the last record (in (xid, id) order) it has passed. */
export interface SealCursor {
  xid: string;
  id: string;
  unsigned_heads: boolean;
}

/** A record the sealer reads after its cursor: with its transaction and whether a link names it already. */
export type RecordToSeal = AuditRow & { xid: string; linked: boolean };

/**
 * The audit records (inserted unchained on the hot paths, read back by GET /logs, the export and the
 * sealer), the sealer's cursor over them, and the hourly counts of failed authentications.
 */
@Injectable()
export class AuditRecordsRepository {
  constructor(private readonly db: Database) {}

  /** One record, in the open transaction if any. */
  async insert(values: RecordValues): Promise<void> {
    await this.db.prepared('audit-insert', INSERT, values);
  }

  /** Several records in one statement. */
  async insertMany(rows: readonly RecordValues[]): Promise<void> {
    const columns = rows[0].map((_, i) => rows.map((row) => row[i]));
    await this.db.prepared('audit-insert-many', INSERT_MANY, columns);
  }

  /** The insert of one record as a statement for the caller to send with its own (composeStatement). */
  insertStatement(values: RecordValues): Required<Statement> {
    return { name: 'audit-insert', text: INSERT, values };
  }

  /** One more failed authentication of the key prefix in its hour. */
  async countAuthFailure(keyPrefix: string, hour: Date, now: Date): Promise<void> {
    await this.db.query(
      `INSERT INTO audit_auth_failures (key_prefix, hour, attempts, last_at) VALUES ($1, $2, 1, $3)
       ON CONFLICT (key_prefix, hour) DO UPDATE SET attempts = audit_auth_failures.attempts + 1, last_at = $3`,
      [keyPrefix, hour, now],
    );
  }

  /** Deletes the hourly failed-authentication counts of hours before `cutoff`; how many. */
  async deleteAuthFailuresBefore(cutoff: Date): Promise<number> {
    const [{ n }] = await this.db.query<{ n: number }>(
      'WITH gone AS (DELETE FROM audit_auth_failures WHERE hour < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [cutoff],
    );
    return n;
  }

  /** A page of the tenant's records matching `filter`, newest first, and how many match in all. */
  async findPage(tenantId: string, filter: ListLogsQueryDto): Promise<{ rows: AuditRow[]; total: number }> {
    const where = new WhereClause()
      .andIf('tenant_id', '=', tenantId)
      .andIf('entity_type', '=', filter.entity_type)
      .andIf('created_at', '>=', filter.start_date)
      .andIf('created_at', '<', filter.end_date)
      .andIf('actor_id', '=', filter.actor_id)
      .andIf('operation', '=', filter.operation)
      .andIf('outcome', '=', filter.outcome);
    if (filter.entity_id !== undefined) {
      // A token is also found in the records of actions on several tokens: a reaction's or a proxied
      // call's detokenization, a list, a search, a tokenize (token_ids, GIN-indexed).
      const id = where.param(filter.entity_id);
      where.and(`(entity_id = ${id} OR token_ids @> ARRAY[${id}::text])`);
    }
    const rows = await this.db.query<AuditRow>(
      `SELECT * FROM audit_records WHERE ${where.text} ORDER BY created_at DESC, id DESC
       LIMIT ${filter.size} OFFSET ${pageOffset(filter)}`,
      where.values,
    );
    const [{ total }] = await this.db.query<{ total: string }>(
      `SELECT count(*) AS total FROM audit_records WHERE ${where.text}`,
      where.values,
    );
    return { rows, total: Number(total) };
  }

  /**
   * Up to `limit` records created at or after `since` (of one tenant, or all), oldest first, after `after`
   * (the last one of the page before), each with its link.
   */
  exportPage(
    since: Date,
    tenantId: string | null,
    after: { createdAt: Date; id: string } | null,
    limit: number,
  ): Promise<(AuditRow & { seq: string | null; hash: string | null })[]> {
    const params: unknown[] = [since, tenantId];
    let page = '';
    if (after !== null) {
      params.push(after.createdAt, after.id);
      page = 'AND (r.created_at, r.id) > ($3, $4)';
    }
    return this.db.query(
      `SELECT ${recordColumns('r')}, l.seq, l.hash FROM audit_records r
       LEFT JOIN audit_links l ON l.tenant_id = r.tenant_id AND l.record_id = r.id
       WHERE r.created_at >= $1 AND ($2::uuid IS NULL OR r.tenant_id = $2) ${page}
       ORDER BY r.created_at, r.id LIMIT ${limit}`,
      params,
    );
  }

  /** Every tenant: those an operator action on all of them (a master key's) is recorded for. */
  async everyTenant(): Promise<string[]> {
    const all = await this.db.query<{ id: string }>('SELECT id FROM tenants');
    return all.map((t) => t.id);
  }

  /** The sealer's cursor, locked until the transaction ends (one sealer at a time). */
  async lockSealCursor(): Promise<SealCursor> {
    const [cursor] = await this.db.query<SealCursor>(
      'SELECT cursor_xid::text AS xid, cursor_id AS id, unsigned_heads FROM audit_seal_state FOR UPDATE',
    );
    return cursor;
  }

  /**
   * Up to `limit` records after the cursor, in (xid, id) order, of transactions older than any still
   * running: none can commit behind the cursor later.
   */
  recordsToSeal(cursor: Pick<SealCursor, 'xid' | 'id'>, limit: number): Promise<RecordToSeal[]> {
    // `r.xid`, never a bare `xid` (the text output column): ORDER BY would sort the ids as text, '1000'
    // before '999', and batches overlapped across such a boundary, linking a record twice.
    return this.db.query(
      `SELECT ${readRecordColumns('r')}, r.xid::text AS xid, EXISTS (
         SELECT 1 FROM audit_links l WHERE l.tenant_id = r.tenant_id AND l.record_id = r.id) AS linked
       FROM audit_records r
       WHERE (r.xid, r.id) > ($1::xid8, $2::uuid) AND r.xid < pg_snapshot_xmin(pg_current_snapshot())
       ORDER BY r.xid, r.id LIMIT ${limit}`,
      [cursor.xid, cursor.id],
    );
  }

  /** Moves the sealer's cursor to the record it passed last. */
  async moveSealCursor(xid: string, id: string): Promise<void> {
    await this.db.query('UPDATE audit_seal_state SET cursor_xid = $1::xid8, cursor_id = $2', [xid, id]);
  }

  /** Notes that the heads chained before head signatures existed are signed now. */
  async markHeadsSigned(): Promise<void> {
    await this.db.query('UPDATE audit_seal_state SET unsigned_heads = false');
  }

  /** The id the next transaction to begin will get: every transaction writing now has a lower one. */
  async nextTransactionId(): Promise<string> {
    const [{ next }] = await this.db.query<{ next: string }>(
      'SELECT pg_snapshot_xmax(pg_current_snapshot())::text AS next',
    );
    return next;
  }

  /** Whether every transaction with an id below `xid` has ended. */
  async endedBefore(xid: string): Promise<boolean> {
    const [{ ended }] = await this.db.query<{ ended: boolean }>(
      'SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::xid8 AS ended',
      [xid],
    );
    return ended;
  }
}
