import { recordColumns } from '../audit/audit-event';
import { StatementBatcher } from '../database/statement-batcher';

type Row = Record<string, unknown>;
type RunQuery = (name: string, text: string, values: unknown[]) => Promise<Row[]>;

interface AuditedRead {
  tenantId: string;
  id: string;
  /** The audit record's values, in recordColumns() order (AuditService.recordPart); the first is the tenant. */
  record: unknown[];
  now: Date;
}

/** The SQL type of each audit record value after the tenant (INSERT's unnest, as AuditService's batch). */
const RECORD_TYPES = ['uuid', 'timestamptz', 'uuid', ...Array<string>(10).fill('text')];

/**
 * Reads of tokens by primary key that write their audit record in the same statement, when the record is
 * known before the row is (the caller's transform is the same for every container): the record is inserted
 * only for a row that is live at `now`, and committed when the statement answers, so it is durable before
 * the data leaves. As PrimaryKeyReads, the reads that arrive while one is in flight go together in the next
 * statement, one tenant's at a time.
 */
export class AuditedReads {
  private readonly batcher = new StatementBatcher<AuditedRead, Row | undefined>(
    (reads) => this.read(reads),
    (read) => String(read.record[1]),
    64,
    (read) => read.tenantId,
  );
  private readonly oneText: string;
  private readonly manyText: string;

  constructor(
    private readonly query: RunQuery,
    /** The SELECT list, every column unqualified (`column AS "property"`). */
    columns: string,
  ) {
    const live = (now: string): string =>
      `deleted_at IS NULL AND (expires_at IS NULL OR expires_at > ${now}) AND cardinality(containers) > 0`;
    const tokenIds = (value: string): string => `string_to_array(${value}, chr(31))`;
    // One read (every read at 1 connection): plain parameters, the token by primary key. Its liveness is in the
    // SELECT list, not next to the key, where the planner could choose a partial index over the whole tenant.
    const scalars = RECORD_TYPES.map((type, i) => `$${i + 3}::${type}`);
    this.oneText = `WITH t AS MATERIALIZED (
        SELECT ${columns}, ${live(`$${RECORD_TYPES.length + 3}::timestamptz`)} AS r_live
        FROM tokens WHERE tenant_id = $1 AND id = $2),
      a AS (
        INSERT INTO audit_records (${recordColumns()})
        SELECT $1, ${scalars.slice(0, -1).join(', ')}, ${tokenIds(scalars[scalars.length - 1])}
        FROM t WHERE t.r_live)
      SELECT * FROM t`;
    const keys = ['r_token', ...RECORD_TYPES.map((_, i) => `r_${i + 2}`), 'r_now', 'r_n'];
    const arrays = [
      '$2::text[]',
      ...RECORD_TYPES.map((type, i) => `$${i + 3}::${type}[]`),
      `$${RECORD_TYPES.length + 3}::timestamptz[]`,
    ];
    // Several reads: the tokens are found by primary key first (MATERIALIZED), for the same reason. The
    // statement's own verdict (r_live) tells the caller which rows are live, so a record is written exactly for
    // the tokens it answers with.
    this.manyText = `WITH r AS MATERIALIZED (
        SELECT * FROM unnest(${arrays.join(', ')}) WITH ORDINALITY AS r(${keys.join(', ')})),
      t AS MATERIALIZED (
        SELECT r.r_n, ${columns}, ${live('r.r_now')} AS r_live
        FROM r JOIN tokens ON tokens.tenant_id = $1 AND tokens.id = r.r_token),
      a AS (
        INSERT INTO audit_records (${recordColumns()})
        SELECT $1, ${RECORD_TYPES.slice(0, -1)
          .map((_, i) => `r.r_${i + 2}`)
          .join(', ')}, ${tokenIds(`r.r_${RECORD_TYPES.length + 1}`)}
        FROM r JOIN t ON t.r_n = r.r_n
        WHERE t.r_live)
      SELECT * FROM t`;
  }

  /**
   * The token's row if it is live at `now`, its record written; null (and no record) when the tenant has no
   * such token or it is deleted or expired.
   */
  async find(tenantId: string, id: string, record: unknown[], now: Date): Promise<Row | null> {
    const row = await this.batcher.submit({ tenantId, id, record, now });
    if (row === undefined) {
      return null;
    }
    const { r_live: live, ...token } = row;
    return live === true ? token : null;
  }

  private async read(reads: AuditedRead[]): Promise<(Row | undefined)[]> {
    if (reads.length === 1) {
      const [read] = reads;
      const values = [read.tenantId, read.id, ...read.record.slice(1), read.now];
      return [(await this.query('tokens.find-live-audited', this.oneText, values))[0]];
    }
    const values: unknown[] = [reads[0].tenantId, reads.map((r) => r.id)];
    for (let column = 1; column <= RECORD_TYPES.length; column++) {
      values.push(reads.map((r) => r.record[column]));
    }
    values.push(reads.map((r) => r.now));
    const rows = await this.query('tokens.find-live-audited-batch', this.manyText, values);
    const answers: (Row | undefined)[] = reads.map(() => undefined);
    for (const { r_n: n, ...row } of rows) {
      answers[Number(n) - 1] = row;
    }
    return answers;
  }
}
