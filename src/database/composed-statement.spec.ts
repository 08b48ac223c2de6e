import { composeStatement, StatementPart } from './composed-statement';

const parent: StatementPart = {
  name: 'spec.parent',
  text: 'INSERT INTO parent (id, name) VALUES ($1, $2)',
  values: ['p1', 'first'],
};
const child: StatementPart = {
  name: 'spec.child',
  text: 'INSERT INTO child (parent_id, at, again) VALUES ($1, $2, $2)',
  values: ['p1', 'now'],
};
const last: StatementPart = {
  name: 'spec.last',
  text: 'INSERT INTO log (a, b, c, d, e, f, g, h, i, j, k) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)',
  values: ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k'],
};

describe('composeStatement', () => {
  it('returns a single part as it is', () => {
    expect(composeStatement([parent])).toBe(parent);
  });

  it('runs every part but the last as a WITH query of the last, each part numbering after the ones before', () => {
    const { text, values } = composeStatement([parent, child, last]);
    expect(text).toBe(
      [
        'WITH part0 AS (INSERT INTO parent (id, name) VALUES ($1, $2)),',
        'part1 AS (INSERT INTO child (parent_id, at, again) VALUES ($3, $4, $4))',
        'INSERT INTO log (a, b, c, d, e, f, g, h, i, j, k) VALUES ($5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)',
      ].join('\n'),
    );
    expect(values).toEqual([...parent.values, ...child.values, ...last.values]);
  });

  it('names a shape once (a prepared statement per shape), within the 63 bytes PostgreSQL keeps of a name', () => {
    const first = composeStatement([parent, child]);
    const again = composeStatement([
      { ...parent, values: ['p2', 'second'] },
      { ...child, values: ['p2', 'later'] },
    ]);
    const other = composeStatement([child, parent]);
    expect(again.name).toBe(first.name);
    expect(again.text).toBe(first.text);
    expect(again.values).toEqual(['p2', 'second', 'p2', 'later']);
    expect(other.name).not.toBe(first.name);
    expect(Buffer.byteLength(`${first.name}#999999`)).toBeLessThanOrEqual(63);
  });
});
