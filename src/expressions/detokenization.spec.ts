import { collectReferencedIds, findReferences, substitute } from './detokenization';

describe('detokenization references', () => {
  it('finds plain, filtered and whole-token references', () => {
    const refs = findReferences(
      "a {{ 1f2e-aa }} b {{abc|json: '$.number'}} {{ token: t-1 | json: '$.metadata.k' }}",
    );
    expect(refs.map((r) => [r.id, r.wholeToken, r.filters])).toEqual([
      ['1f2e-aa', false, ''],
      ['abc', false, "|json: '$.number'"],
      ['t-1', true, "| json: '$.metadata.k'"],
    ]);
  });

  it('collects distinct ids from nested JSON values', () => {
    const ids = collectReferencedIds({
      a: ['{{ x }}', { b: 'pre {{ y }} {{ x }}' }],
      c: 5,
      '{{ z }}': 'key is ignored',
    });
    expect([...ids].sort()).toEqual(['x', 'y']);
  });

  it('keeps the value type for a whole-string reference and writes text otherwise', () => {
    const card = { number: '4242' };
    expect(substitute('{{ c }}', () => card, JSON.stringify)).toBe(card);
    expect(substitute(' {{ c }}', () => card, JSON.stringify)).toBe(' {"number":"4242"}');
    expect(substitute('n={{ a }}&m={{ b }}', (r) => r.id.toUpperCase(), String)).toBe('n=A&m=B');
    expect(substitute('no refs {{ }}', () => 'x', String)).toBe('no refs {{ }}');
  });
});
