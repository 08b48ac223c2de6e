import { WhereClause } from './where-clause';

describe('WhereClause', () => {
  it('numbers placeholders in order and skips optional filters without a value', () => {
    const where = new WhereClause()
      .andIf('tenant_id', '=', 't1')
      .andIf('type', '=', undefined)
      .andIf('created_at', '>=', '2026-01-01');
    where.and(`id = ANY(${where.param(['a', 'b'])}::text[])`);
    expect(where.text).toBe('tenant_id = $1 AND created_at >= $2 AND id = ANY($3::text[])');
    expect(where.values).toEqual(['t1', '2026-01-01', ['a', 'b']]);
  });

  it('keeps values out of the text, whatever they hold', () => {
    const where = new WhereClause().andIf('name', '=', "x' OR '1'='1");
    expect(where.text).toBe('name = $1');
  });
});
