import { StatementBatcher } from '../database/statement-batcher';
import { PrimaryKeyReads } from './primary-key-reads.statements';

type Row = Record<string, unknown>;

/** A fake `tokens` table behind the two statements PrimaryKeyReads sends; records each statement. */
function reads(table: Row[]): { reads: PrimaryKeyReads; sent: { name: string; values: unknown[] }[] } {
  const sent: { name: string; values: unknown[] }[] = [];
  const find = (tenant: unknown, id: unknown): Row | undefined =>
    table.find((row) => row.tenantId === tenant && row.id === id);
  const query = (name: string, _text: string, values: unknown[]): Promise<Row[]> => {
    sent.push({ name, values });
    if (name === 'tokens.find-live') {
      const row = find(values[0], values[1]);
      return Promise.resolve(row === undefined ? [] : [{ ...row }]);
    }
    const [tenant, ids] = values as [string, string[]];
    const rows: Row[] = [];
    ids.forEach((id, i) => {
      const row = find(tenant, id);
      if (row !== undefined) {
        rows.push({ key_n: String(i + 1), ...row });
      }
    });
    return Promise.resolve(rows.reverse());
  };
  const batcher = <I, O>(
    run: (items: I[]) => Promise<O[]>,
    shape: { tenant: (item: I) => string; conflictKey: (item: I) => string; max: number },
  ): StatementBatcher<I, O> => new StatementBatcher(run, shape.conflictKey, shape.max, shape.tenant);
  return { reads: new PrimaryKeyReads(query, batcher, 'columns'), sent };
}

const TABLE = [
  { tenantId: 't1', id: 'a', data: 'A' },
  { tenantId: 't1', id: 'b', data: 'B' },
  { tenantId: 't2', id: 'c', data: 'C' },
];

describe('PrimaryKeyReads.findMany', () => {
  it('answers each id in order, undefined for one the tenant lacks, in one statement', async () => {
    const { reads: r, sent } = reads(TABLE);
    await expect(r.findMany('t1', ['b', 'c', 'a'])).resolves.toEqual([
      { tenantId: 't1', id: 'b', data: 'B' },
      undefined,
      { tenantId: 't1', id: 'a', data: 'A' },
    ]);
    expect(sent).toEqual([
      {
        name: 'tokens.find-live-batch',
        values: ['t1', ['b', 'c', 'a']],
      },
    ]);
  });

  it("shares the statement with the same tenant's reads of other requests, each getting its own row objects, never with another tenant's", async () => {
    const { reads: r, sent } = reads(TABLE);
    const [one, two, single] = await Promise.all([
      r.findMany('t1', ['a', 'b']),
      r.findMany('t1', ['a']),
      r.find('t2', 'c'),
    ]);
    expect(sent).toEqual([
      { name: 'tokens.find-live-batch', values: ['t1', ['a', 'b', 'a']] },
      { name: 'tokens.find-live', values: ['t2', 'c'] },
    ]);
    expect(one.map((row) => row?.data)).toEqual(['A', 'B']);
    expect(two.map((row) => row?.data)).toEqual(['A']);
    expect(single?.data).toBe('C');
    expect(two[0]).not.toBe(one[0]);
  });
});
