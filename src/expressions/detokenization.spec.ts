import { collectReferences, findReferences, noteReferences, substitute } from './detokenization';

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

  it('collects distinct ids from nested JSON values, whole when any reference wants the whole token', () => {
    const ids = collectReferences({
      a: ['{{ x }}', { b: 'pre {{ y }} {{ token: x }} {{ x }}' }],
      c: 5,
      d: '{{ w }} {{ token: v }}',
      '{{ z }}': 'key is ignored',
    });
    expect([...ids].sort()).toEqual([
      ['v', true],
      ['w', false],
      ['x', true],
      ['y', false],
    ]);
    expect([...noteReferences(findReferences('{{ token: a }} {{ a }} {{ b }}'))]).toEqual([
      ['a', true],
      ['b', false],
    ]);
  });

  it('keeps the value type for a whole-string reference and writes text otherwise', () => {
    const card = { number: '4242' };
    expect(substitute('{{ c }}', () => card, JSON.stringify)).toBe(card);
    expect(substitute(' {{ c }}', () => card, JSON.stringify)).toBe(' {"number":"4242"}');
    expect(substitute('n={{ a }}&m={{ b }}', (r) => r.id.toUpperCase(), String)).toBe('n=A&m=B');
    expect(substitute('no refs {{ }}', () => 'x', String)).toBe('no refs {{ }}');
  });

  it("hands every string's references to substitute, which then does not search the string again", () => {
    const found = new Map<string, ReturnType<typeof findReferences>>();
    collectReferences({ a: ['{{ x }}', 'n={{ y | upcase }}'], b: 'plain' }, new Map(), 0, found);
    expect([...found.keys()]).toEqual(['{{ x }}', 'n={{ y | upcase }}', 'plain']);
    expect(found.get('n={{ y | upcase }}')).toEqual(findReferences('n={{ y | upcase }}'));
    // References that are not the string's own are used as given: proof that none is searched for again.
    const given = findReferences('{{ other }}');
    expect(substitute('{{ x }}', (r) => r.id, String, given)).toBe('other');
  });
});
