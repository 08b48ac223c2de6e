import { ExpressionEngine } from '../expression-engine';
import { ExpressionError } from '../expression.errors';
import { parseJsonPath, selectJsonPath } from './json-path';

describe('JSONPath subset', () => {
  describe('parseJsonPath', () => {
    it('parses root, names, quoted names and indexes', () => {
      expect(parseJsonPath('$')).toEqual([]);
      expect(parseJsonPath('$.a[\'b c\'][2].d_e-f["g\\"h"][-1]')).toEqual([
        { key: 'a' },
        { key: 'b c' },
        { index: 2 },
        { key: 'd_e-f' },
        { key: 'g"h' },
        { index: -1 },
      ]);
    });

    it.each([
      ['', /must start with \$/],
      ['a.b', /must start with \$/],
      ['$..a', /recursive descent/],
      ['$.*', /wildcards/],
      ['$[*]', /wildcards/],
      ['$[?(@.a)]', /filter expressions/],
      ['$[0:2]', /slices and unions/],
      ['$[0,1]', /slices and unions/],
      ['$.', /no name after the dot/],
      ['$[abc]', /quoted name or a whole-number index/],
      ["$['a", /unterminated/],
      ['$[0', /unterminated/],
      ['$ a', /unexpected character/],
    ])('rejects %s', (path, message) => {
      expect(() => parseJsonPath(path)).toThrow(ExpressionError);
      expect(() => parseJsonPath(path)).toThrow(message);
    });
  });

  describe('selectJsonPath', () => {
    const data = { a: { b: [10, { c: 'x' }] }, n: null };

    it('selects nested values', () => {
      expect(selectJsonPath(data, parseJsonPath('$.a.b[1].c'))).toEqual({ found: true, value: 'x' });
      expect(selectJsonPath(data, parseJsonPath('$.a.b[-2]'))).toEqual({ found: true, value: 10 });
      expect(selectJsonPath(data, parseJsonPath('$.n'))).toEqual({ found: true, value: null });
      expect(selectJsonPath(data, parseJsonPath('$'))).toEqual({ found: true, value: data });
    });

    it('finds nothing for missing keys, out-of-range indexes and prototype properties', () => {
      for (const path of ['$.z', '$.a.b[5]', '$.a.b.c', '$.a[0]', '$.constructor', '$.a.b.length']) {
        expect(selectJsonPath(data, parseJsonPath(path)).found).toBe(false);
      }
    });
  });

  describe('json filter', () => {
    const engine = new ExpressionEngine();
    const data = { number: '4242424242424242', expiration_month: 12, billing: { lines: ['a', 'b'] } };

    it('returns the selected value typed', () => {
      expect(engine.render("{{ data | json: '$.number' }}", { data })).toBe('4242424242424242');
      expect(engine.render("{{ data | json: '$.expiration_month' }}", { data })).toBe(12);
      expect(engine.render("{{ data | json: '$.billing' }}", { data })).toEqual({ lines: ['a', 'b'] });
      expect(engine.render('{{ data | json: "$[\'billing\'].lines[1]" }}', { data })).toBe('b');
    });

    it('chains with other filters', () => {
      expect(engine.render("{{ data | json: '$.number' | reveal_last: 4 }}", { data })).toBe(
        'XXXXXXXXXXXX4242',
      );
    });

    it('fails when nothing matches', () => {
      expect(() => engine.render("{{ data | json: '$.cvc' }}", { data })).toThrow(
        'json: the JSONPath matched no value (exactly one is required)',
      );
    });

    it('fails for a path that is not a string', () => {
      expect(() => engine.render('{{ data | json: 1 }}', { data })).toThrow(/expects a JSONPath string/);
    });
  });
});
