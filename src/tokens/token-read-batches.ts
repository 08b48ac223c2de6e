import type { Database } from '../database/database.service';
import type { StatementBatcher } from '../database/statement-batcher';

export type Row = Record<string, unknown>;
/** Database.prepared, or a stand-in. */
export type RunQuery = (name: string, text: string, values: unknown[]) => Promise<Row[]>;

/**
 * The batcher of a read of tokens by primary key (PrimaryKeyReads, AuditedReads): reads that arrive while one
 * is in flight go together in the next statement, one tenant's at a time and at most 64, never two of one
 * `conflictKey`.
 */
export function tokenReadBatcher<I extends { tenantId: string }, O>(
  batcher: Database['batcher'],
  read: (items: I[]) => Promise<O[]>,
  conflictKey: (item: I) => string,
): StatementBatcher<I, O> {
  return batcher(read, { tenant: (item) => item.tenantId, conflictKey, max: 64 });
}
