import { recordColumns } from '../audit/audit-event';
import { StatementBatcher } from '../database/statement-batcher';

type Row = Record<string, unknown>;
type RunQuery = (name: string, text: string, values: unknown[]) => Promise<Row[]>;

interface AuditedDetokenize {
  tenantId: string;
  ids: readonly string[];
  /** The code reactor the records are for: they are written only if the tenant has it. */
  reactorId: string;
  /** Each record's values, in recordColumns() order (AuditService.recordPart); the first is the tenant. */
  records: readonly unknown[][];
  now: Date;
  seq: number;
}

/** The SQL type of each audit record value after the tenant (INSERT's unnest, as AuditService's batch). */
const RECORD_TYPES = ['uuid', 'timestamptz', 'uuid', ...Array<string>(10).fill('text')];

/**
 * A reaction's token read and its audit records in one statement, when the records are known before the
 * rows are (the caller's transform is the same for every container): the records are written only when
 * every token of the request is live at `now` and the tenant has the code reactor, and committed when the
 * statement answers, so they are durable before the data leaves. Requests that arrive while one is in flight
 * go together in the next statement, one tenant's at a time.
 */
export class AuditedDetokenizeReads {
  private seq = 0;
  private readonly batcher = new StatementBatcher<AuditedDetokenize, { rows: Row[]; written: boolean }>(
    (reads) => this.read(reads),
    (read) => String(read.seq),
    64,
    (read) => read.tenantId,
  );
  private readonly text: string;

  constructor(
    private readonly query: RunQuery,
    /** The SELECT list, every column unqualified (`column AS "property"`). */
    columns: string,
  ) {
    const recordKeys = RECORD_TYPES.map((_, i) => `r_${i + 2}`);
    const recordArrays = RECORD_TYPES.map((type, i) => `$${i + 6}::${type}[]`);
    const group = `$${RECORD_TYPES.length + 6}::int[]`;
    // As AuditedReads: the tokens by primary key first (MATERIALIZED), their liveness computed beside them.
    this.text = `WITH k AS MATERIALIZED (
        SELECT * FROM unnest($2::text[], $3::int[]) WITH ORDINALITY AS k(k_id, k_group, k_n)),
      t AS MATERIALIZED (
        SELECT k.k_n AS r_n, k.k_group AS r_group, ${columns},
          deleted_at IS NULL AND (expires_at IS NULL OR expires_at > $5::timestamptz)
            AND cardinality(containers) > 0 AS r_live
        FROM k JOIN tokens ON tokens.tenant_id = $1 AND tokens.id = k.k_id),
      g AS MATERIALIZED (
        SELECT g.g_n FROM unnest($4::uuid[]) WITH ORDINALITY AS g(g_reactor, g_n)
        WHERE EXISTS (SELECT 1 FROM reactors
            WHERE reactors.tenant_id = $1 AND reactors.id = g.g_reactor AND reactors.code IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM k LEFT JOIN t ON t.r_n = k.k_n
            WHERE k.k_group = g.g_n AND t.r_live IS NOT TRUE)),
      a AS (
        INSERT INTO audit_records (${recordColumns()})
        SELECT $1, ${recordKeys.slice(0, -1).join(', ')}, string_to_array(${recordKeys[recordKeys.length - 1]}, chr(31))
        FROM unnest(${recordArrays.join(', ')}, ${group}) AS r(${recordKeys.join(', ')}, r_group)
        JOIN g ON g.g_n = r.r_group)
      SELECT t.*, EXISTS (SELECT 1 FROM g WHERE g.g_n = t.r_group) AS r_written FROM t`;
  }

  /**
   * The live rows of `ids`, in their order, and whether the records were written: only when all are live
   * (and the reactor is there). With `written` false nothing was recorded and the rows may be missing some.
   */
  async find(
    tenantId: string,
    ids: readonly string[],
    reactorId: string,
    records: readonly unknown[][],
    now: Date,
  ): Promise<{ rows: Row[]; written: boolean }> {
    this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER;
    return this.batcher.submit({ tenantId, ids, reactorId, records, now, seq: this.seq });
  }

  private async read(reads: AuditedDetokenize[]): Promise<{ rows: Row[]; written: boolean }[]> {
    const groups = reads.flatMap((r, g) => r.ids.map(() => g + 1));
    const values: unknown[] = [
      reads[0].tenantId,
      reads.flatMap((r) => r.ids),
      groups,
      reads.map((r) => r.reactorId),
      reads[0].now,
    ];
    const records = reads.flatMap((r) => r.records);
    for (let column = 1; column <= RECORD_TYPES.length; column++) {
      values.push(records.map((record) => record[column]));
    }
    values.push(reads.flatMap((r, g) => r.records.map(() => g + 1)));
    const found = await this.query('tokens.detokenize-audited', this.text, values);
    const answers = reads.map(() => ({ rows: [] as Row[], written: false }));
    const byN: Row[] = [];
    for (const { r_n: n, r_group: g, r_live: live, r_written: written, ...row } of found) {
      const answer = answers[Number(g) - 1];
      answer.written = written === true;
      if (live === true) {
        byN[Number(n)] = row;
      }
    }
    let n = 1;
    reads.forEach((read, g) => {
      for (let i = 0; i < read.ids.length; i++, n++) {
        if (byN[n] !== undefined) {
          answers[g].rows.push(byN[n]);
        }
      }
    });
    return answers;
  }
}
