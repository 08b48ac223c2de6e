import type { Database } from '../database/database.service';
import type { StatementBatcher } from '../database/statement-batcher';
import { Row, RunQuery, tokenReadBatcher } from './token-read-batches';

interface Key {
  tenantId: string;
  id: string;
  /** Unique per read: two reads of one token share a statement, each gets its own row object. */
  seq: number;
}

/**
 * Reads of tokens by primary key, as the reveal route and detokenization make them: a read that arrives while none is
 * in flight goes at once, alone, by plain primary key; reads that arrive meanwhile go together in the next
 * statement (StatementBatcher), one round trip and one socket write for all of them. Each read gets its
 * own row, so no two requests ever share an object.
 */
export class PrimaryKeyReads {
  private seq = 0;
  private readonly batcher: StatementBatcher<Key, Row | undefined>;
  private readonly oneText: string;
  private readonly manyText: string;

  constructor(
    private readonly query: RunQuery,
    batcher: Database['batcher'],
    /** The SELECT list, every column unqualified (`column AS "property"`). */
    columns: string,
  ) {
    this.batcher = tokenReadBatcher(
      batcher,
      (keys: Key[]) => this.read(keys),
      (key) => String(key.seq),
    );
    this.oneText = `SELECT ${columns} FROM tokens WHERE tenant_id = $1 AND id = $2`;
    // One tenant's ids (the batcher never mixes tenants), joined in order of submission; WITH ORDINALITY
    // tells which key each row answers.
    this.manyText = `SELECT k.key_n, ${columns}
      FROM unnest($2::text[]) WITH ORDINALITY AS k(key_id, key_n)
      JOIN tokens ON tokens.tenant_id = $1 AND tokens.id = k.key_id`;
  }

  /** The token's row, deleted or expired ones included; undefined when the tenant has no such token. */
  find(tenantId: string, id: string): Promise<Row | undefined> {
    return this.batcher.submit(this.key(tenantId, id));
  }

  /**
   * find() of several tokens of one request (a detokenization's): they go in the same statement, with the
   * reads of other requests that arrive meanwhile. One answer per id, in order.
   */
  findMany(tenantId: string, ids: readonly string[]): Promise<(Row | undefined)[]> {
    return this.batcher.submitAll(ids.map((id) => this.key(tenantId, id)));
  }

  private key(tenantId: string, id: string): Key {
    this.seq = (this.seq + 1) % Number.MAX_SAFE_INTEGER;
    return { tenantId, id, seq: this.seq };
  }

  private async read(keys: Key[]): Promise<(Row | undefined)[]> {
    if (keys.length === 1) {
      const [key] = keys;
      return [(await this.query('tokens.find-live', this.oneText, [key.tenantId, key.id]))[0]];
    }
    const rows = await this.query('tokens.find-live-batch', this.manyText, [
      keys[0].tenantId,
      keys.map((k) => k.id),
    ]);
    const answers: (Row | undefined)[] = keys.map(() => undefined);
    for (const { key_n: n, ...row } of rows) {
      answers[Number(n) - 1] = row;
    }
    return answers;
  }
}
