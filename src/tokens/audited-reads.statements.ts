import { Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { recordColumns } from '../audit/audit-event';
import type { AuditPart } from '../audit/audit.service';
import { connectionFailure } from '../common/database-unavailable';
import type { Database } from '../database/database.service';
import type { StatementBatcher } from '../database/statement-batcher';
import { Row, RunQuery, tokenReadBatcher } from './token-read-batches';

/** One request's read: its tokens, and the records written only when every one of them is live at `now`. */
interface AuditedRead {
  tenantId: string;
  ids: readonly string[];
  /** Each audit record's values, in recordColumns() order (AuditService.recordPart); the first is the tenant. */
  records: readonly unknown[][];
  now: Date;
}

/** The SQL type of each audit record value after the tenant (INSERT's unnest, as AuditService's batch). */
const RECORD_TYPES = ['uuid', 'timestamptz', 'uuid', ...Array<string>(10).fill('text')];

/** The JSON keys (and SQL columns) of a batch's keys, and of its records' values after the tenant. */
const KEY_NAMES = ['k_n', 'k_token', 'k_read', 'k_now'];
const RECORD_NAMES = RECORD_TYPES.map((_, i) => `r_${i + 2}`);

/**
 * Reads of tokens by primary key that write their audit records in the same statement, when the records are
 * known before the rows are (the caller's transform is the same for every container): a read's records are
 * inserted only when every token it names is live at `now`, and committed when the statement answers, so
 * they are durable before the data leaves. As PrimaryKeyReads, the reads that arrive while one is in flight
 * go together in the next statement, one tenant's at a time.
 */
export class AuditedReads {
  private readonly logger = new Logger('Tokens');
  private readonly batcher: StatementBatcher<AuditedRead, (Row | null)[]>;
  private readonly oneText: string;
  private readonly manyText: string;

  constructor(
    private readonly query: RunQuery,
    batcher: Database['batcher'],
    /** The SELECT list, every column unqualified (`column AS "property"`). */
    columns: string,
    /** The prepared statements' name: one per SELECT list. */
    private readonly name: string,
  ) {
    this.batcher = tokenReadBatcher(
      batcher,
      (reads: AuditedRead[]) => this.read(reads),
      (read) => String(read.records[0][1]),
    );
    const live = (now: string): string =>
      `deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ${now}) AND cardinality(containers) > 0`;
    const tokenIds = (value: string): string => `string_to_array(${value}, chr(31))`;
    // One read of one token with one record (every reveal at 1 connection): plain parameters, the token by
    // primary key. Its liveness is in the SELECT list, not next to the key, where the planner could choose a
    // partial index over the whole tenant.
    const scalars = RECORD_TYPES.map((type, i) => `$${i + 3}::${type}`);
    this.oneText = `WITH t AS MATERIALIZED (
        SELECT ${columns}, ${live(`$${RECORD_TYPES.length + 3}::timestamptz`)} AS r_live
        FROM tokens WHERE tenant_id = $1 AND id = $2),
      a AS (
        INSERT INTO audit_records (${recordColumns()})
        SELECT $1, ${scalars.slice(0, -1).join(', ')}, ${tokenIds(scalars[scalars.length - 1])}
        FROM t WHERE t.r_live)
      SELECT * FROM t`;
    const columnsOf = (names: string[], types: string[]): string =>
      names.map((name, i) => `${name} ${types[i]}`).join(', ');
    const keyColumns = columnsOf(KEY_NAMES, ['int', 'text', 'int', 'timestamptz']);
    const recordNames = ['r_read', ...RECORD_NAMES];
    // Otherwise the tokens are found by primary key first (MATERIALIZED), for the same reason. The keys and the
    // records arrive as two JSON parameters, one object per key or record. The statement's own verdict
    // (r_live) tells the caller which rows are live, so records are written exactly when it answers with
    // every token they name.
    this.manyText = `WITH k AS MATERIALIZED (
        SELECT * FROM json_to_recordset($2::json) AS k(${keyColumns})),
      t AS MATERIALIZED (
        SELECT k.k_n, k.k_read, ${columns}, ${live('k.k_now')} AS r_live
        FROM k JOIN tokens ON tokens.tenant_id = $1 AND tokens.id = k.k_token),
      a AS (
        INSERT INTO audit_records (${recordColumns()})
        SELECT $1, ${RECORD_NAMES.slice(0, -1)
          .map((name) => `r.${name}`)
          .join(', ')}, ${tokenIds(`r.${RECORD_NAMES[RECORD_NAMES.length - 1]}`)}
        FROM json_to_recordset($3::json) AS r(${columnsOf(recordNames, ['int', ...RECORD_TYPES])})
        WHERE NOT EXISTS (
          SELECT FROM k LEFT JOIN t ON t.k_n = k.k_n WHERE k.k_read = r.r_read AND t.r_live IS NOT TRUE))
      SELECT * FROM t`;
  }

  /**
   * Each token of `ids` (distinct, at least one) if it is live at `now`, else null; `records` are written when
   * none is null, and not at all otherwise, each reported written or not. undefined when the statement failed
   * for a reason it cannot pin on the read or the records: the caller then reads and records step by step,
   * where a record that cannot be written answers 503 as on every route. Nothing of the failed statement was
   * kept.
   */
  async findAll(
    tenantId: string,
    ids: readonly string[],
    records: readonly AuditPart[],
    now: Date,
  ): Promise<(Row | null)[] | undefined> {
    let found: (Row | null)[];
    try {
      found = await this.batcher.submit({ tenantId, ids, records: records.map((r) => r.values), now });
    } catch (err) {
      if (!(err instanceof QueryFailedError) || connectionFailure(err) !== null) {
        records.forEach((r) => r.written(false));
        throw err;
      }
      // Only the SQLSTATE: the statement's parameters hold the request's records. Every such read pays
      // two statements until the cause is gone, so operators see it instead of a silent slow path.
      this.logger.warn(
        { err: { code: (err as { code?: unknown }).code } },
        'the audited read failed: read, then recorded, step by step',
      );
      return undefined;
    }
    if (found.every((row) => row !== null)) {
      records.forEach((r) => r.written(true));
    }
    return found;
  }

  private async read(reads: AuditedRead[]): Promise<(Row | null)[][]> {
    if (reads.length === 1 && reads[0].ids.length === 1 && reads[0].records.length === 1) {
      const [{ tenantId, ids, records, now }] = reads;
      const values = [tenantId, ids[0], ...records[0].slice(1), now];
      const [{ r_live: live, ...row } = { r_live: false }] = await this.query(
        this.name,
        this.oneText,
        values,
      );
      return [[live === true ? row : null]];
    }
    // Numbered from 1 across the batch, as the statement's rows name them (k_n).
    // Times as ISO text: JSON.stringify's own Date conversion costs about twice as much.
    let key = 0;
    const keys = reads.flatMap((r, read) => {
      const now = r.now.toISOString();
      return r.ids.map((id) => ({ k_n: ++key, k_token: id, k_read: read, k_now: now }));
    });
    const records = reads.flatMap((r, read) =>
      r.records.map((record) => {
        const row: Record<string, unknown> = { r_read: read };
        RECORD_NAMES.forEach((name, i) => {
          const value = record[i + 1];
          row[name] = value instanceof Date ? value.toISOString() : value;
        });
        return row;
      }),
    );
    const values = [reads[0].tenantId, JSON.stringify(keys), JSON.stringify(records)];
    const rows = await this.query(`${this.name}-batch`, this.manyText, values);
    const answers = reads.map((r) => r.ids.map((): Row | null => null));
    // Each read's first key in the statement's numbering (k_n counts from 1).
    const first: number[] = [];
    let next = 1;
    for (const read of reads) {
      first.push(next);
      next += read.ids.length;
    }
    for (const { k_n: k, k_read: n, r_live: live, ...row } of rows) {
      if (live === true) {
        answers[Number(n)][Number(k) - first[Number(n)]] = row;
      }
    }
    return answers;
  }
}
