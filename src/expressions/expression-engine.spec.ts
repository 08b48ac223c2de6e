import { Liquid } from 'liquidjs';
import { ExpressionEngine } from './expression-engine';
import { ExpressionError } from './expression.errors';

const card = { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' };

function errorOf(run: () => unknown): ExpressionError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ExpressionError);
    return error as ExpressionError;
  }
  throw new Error('expected an ExpressionError');
}

describe('ExpressionEngine', () => {
  const engine = new ExpressionEngine();

  describe('render (typed)', () => {
    it('returns a string for a string field', () => {
      expect(engine.render('{{ data.number }}', { data: card })).toBe('4242424242424242');
    });

    it('returns the number a JSONPath selects', () => {
      expect(engine.render("{{ data | json: '$.expiration_month' }}", { data: card })).toBe(12);
    });

    it('returns the object itself', () => {
      expect(engine.render('{{ data }}', { data: card })).toBe(card);
    });

    it('returns arrays, booleans and null as they are', () => {
      expect(engine.render('{{ data.list }}', { data: { list: [1, 'a'] } })).toEqual([1, 'a']);
      expect(engine.render('{{ data.ok }}', { data: { ok: false } })).toBe(false);
      expect(engine.render('{{ data.none }}', { data: { none: null } })).toBeNull();
      expect(engine.render('{{ data.missing }}', { data: {} })).toBeUndefined();
    });

    it('ignores whitespace around a single output', () => {
      expect(engine.render('  {{ data.expiration_month }}\n', { data: card })).toBe(12);
    });

    it('renders mixed text to a string', () => {
      expect(engine.render('exp {{ data.expiration_month }}', { data: card })).toBe('exp 12');
      expect(engine.render('{{ data.expiration_month }}{{ data.expiration_year }}', { data: card })).toBe(
        '122030',
      );
    });

    it('renders tags to a string even when they output one value', () => {
      expect(engine.render('{% if true %}{{ data.expiration_month }}{% endif %}', { data: card })).toBe('12');
    });

    it('gives stringify its JSON string', () => {
      expect(engine.render('{{ data | stringify }}', { data: { a: 1, b: 'x' } })).toBe('{"a":1,"b":"x"}');
    });
  });

  describe('renderString', () => {
    it('renders an undefined variable as empty', () => {
      expect(engine.renderString('[{{ data.nope }}]', { data: {} })).toBe('[]');
    });

    it('writes an object inside text as JSON and arrays as Liquid does', () => {
      expect(engine.renderString('card: {{ data }}', { data: { a: 1 } })).toBe('card: {"a":1}');
      expect(engine.renderString('{{ data }}', { data: ['a', 'b'] })).toBe('ab');
    });

    it('keeps the standard Liquid filters', () => {
      expect(engine.renderString("{{ 'abc' | upcase | append: '!' }}", {})).toBe('ABC!');
    });

    it('renders the bank fingerprint form', () => {
      const data = { account_number: '000123456789', routing_number: '110000000' };
      expect(engine.renderString('{{ data.account_number }}|{{ data.routing_number }}', { data })).toBe(
        '000123456789|110000000',
      );
    });

    it('does not write increments back into the caller scope', () => {
      const scope: Record<string, unknown> = { n: 1 };
      engine.renderString('{% increment n %}', scope);
      expect(scope).toEqual({ n: 1 });
    });

    it('hides prototype properties', () => {
      expect(engine.renderString('{{ data.constructor }}{{ data.__proto__ }}', { data: {} })).toBe('');
    });
  });

  describe('renderDeep', () => {
    it('renders each string leaf typed and keeps the rest', () => {
      const mask = {
        number: '{{ data.number | reveal_last: 4 }}',
        expiration_month: '{{ data.expiration_month }}',
        nested: ['{{ data.expiration_year }}', 'plain', 7, true, null],
      };
      expect(engine.renderDeep(mask, { data: card })).toEqual({
        number: 'XXXXXXXXXXXX4242',
        expiration_month: 12,
        nested: [2030, 'plain', 7, true, null],
      });
    });

    it('renders a top-level string and passes other primitives through', () => {
      expect(engine.renderDeep('{{ data.number | last4 }}', { data: card })).toBe('4242');
      expect(engine.renderDeep(42, {})).toBe(42);
    });

    it('keeps a __proto__ key as a plain key', () => {
      const out = engine.renderDeep(JSON.parse('{"__proto__": "{{ data.cvc }}"}'), { data: card }) as object;
      expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
      expect(Object.getOwnPropertyDescriptor(out, '__proto__')?.value).toBe('123');
    });

    it('refuses values nested too deeply', () => {
      let deep: unknown = 'x';
      for (let i = 0; i < 100; i++) {
        deep = [deep];
      }
      expect(errorOf(() => engine.renderDeep(deep, {})).message).toMatch(/nested/);
    });
  });

  describe('isExpression', () => {
    it.each([
      ['{{ data }}', true],
      ['a {{ data.x }} b', true],
      ['{% if x %}y{% endif %}', true],
      ['plain', false],
      ['{{ unclosed', false],
      ['}} {{', false],
    ])('%s -> %s', (value, expected) => {
      expect(engine.isExpression(value)).toBe(expected);
    });
  });

  describe('errors', () => {
    it('rejects an unknown filter when parsing', () => {
      expect(errorOf(() => engine.parse('{{ data | no_such_filter }}')).message).toMatch(
        /undefined filter: no_such_filter/,
      );
    });

    it('rejects bad syntax', () => {
      expect(() => engine.parse('{{ data.number ')).toThrow(ExpressionError);
      expect(() => engine.parse('{% if %}')).toThrow(ExpressionError);
      expect(() => engine.parse('{% for x in y %}')).toThrow(ExpressionError);
    });

    it('accepts a valid template', () => {
      expect(() => engine.parse("{{ data | json: '$.number' | reveal_last: 4, '*' }}")).not.toThrow();
    });

    it('has no file tags', () => {
      expect(errorOf(() => engine.parse("{% include '/etc/passwd' %}")).message).toMatch(/include/);
      expect(() => engine.parse("{% render 'x' %}")).toThrow(ExpressionError);
    });

    it('never puts scope values in a parse error', () => {
      const error = errorOf(() => engine.renderString('{{ data.number | nope }}', { data: card }));
      expect(error.message).not.toContain('4242');
    });

    it('never puts scope values in a filter error', () => {
      const scope = { data: { secret: 'top-secret-value' } };
      for (const template of [
        '{{ data.secret | to_number }}',
        'x {{ data.secret | to_boolean }}',
        "{{ data | json: '$.missing' }}",
        "{{ data.secret | hmac: 'md5', 'k' }}",
      ]) {
        const error = errorOf(() => engine.render(template, scope));
        expect(error.message).not.toContain('secret-value');
      }
    });

    it('names the filter and the position of a render error', () => {
      expect(errorOf(() => engine.renderString('ab {{ "x" | to_number }}', {})).message).toBe(
        'to_number: expects a numeric string, line:1, col:4',
      );
    });
  });

  describe('limits', () => {
    it('stops a loop that produces a huge output', () => {
      const started = Date.now();
      const error = errorOf(() =>
        engine.renderString('{% for i in (1..1000000) %}{{ data }}{% endfor %}', {
          data: 'x'.repeat(10_000),
        }),
      );
      expect(error.message).toMatch(/too much output|too long/);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('stops repeated append', () => {
      const template =
        "{% assign s = 'xxxxxxxxxx' %}{% for i in (1..64) %}{% assign s = s | append: s %}{% endfor %}{{ s }}";
      expect(() => engine.renderString(template, {})).toThrow(ExpressionError);
    });

    it('stops a huge range at once', () => {
      expect(() => engine.render('{{ (1..100000000) | size }}', {})).toThrow(ExpressionError);
    });

    it('stops a long-running loop by time', () => {
      const started = Date.now();
      const error = errorOf(() =>
        engine.renderString('{% for i in (1..3000) %}{% for j in (1..3000) %}{% endfor %}{% endfor %}', {}),
      );
      expect(error.message).toMatch(/too long|too much/);
      expect(Date.now() - started).toBeLessThan(2000);
    });

    it('stops a filter that would allocate too much', () => {
      expect(() =>
        engine.renderString("{{ 'x' | pad_left: 1000000 }}{{ 'x' | pad_left: 1000000 }}", {}),
      ).not.toThrow();
      const many = Array.from({ length: 11 }, () => "{{ 'x' | pad_left: 1000000 }}").join('');
      expect(errorOf(() => engine.renderString(many, {})).message).toMatch(/too much output/);
    });

    /** One output chaining slow standard filters: ~100 ms each over 100k characters, no template node between them. */
    const slowChain = `{{ data | split: "" ${'| reject: "y" '.repeat(40)}| size }}`;
    const slowData = 'x'.repeat(100_000);

    it('checks the time limit between the filters of one output, typed or not', () => {
      for (const render of [
        () => engine.render(slowChain, { data: slowData }),
        () => engine.renderString(slowChain, { data: slowData }),
      ]) {
        const started = Date.now();
        expect(errorOf(render).message).toMatch(/too long/);
        expect(Date.now() - started).toBeLessThan(2000);
      }
    });

    it('shares one time budget between all the renders of withBudget, async steps included', async () => {
      const started = Date.now();
      const outcomes = await engine.withBudget(async () => {
        const results: string[] = [];
        for (let i = 0; i < 10; i++) {
          await new Promise((resolve) => setImmediate(resolve));
          try {
            engine.renderDeep({ a: slowChain, b: slowChain }, { data: slowData });
            results.push('ok');
          } catch (error) {
            results.push((error as Error).message);
          }
        }
        return results;
      }, 600);
      expect(outcomes.every((o) => /too long/.test(o))).toBe(true);
      // Ten masks of two leaves each would take 10 s with a limit per render only.
      expect(Date.now() - started).toBeLessThan(2500);
      // Outside the budget a cheap render works again.
      expect(engine.render('{{ data | size }}', { data: 'abc' })).toBe(3);
    });

    it('refuses a template longer than the parse limit', () => {
      expect(errorOf(() => engine.parse('x'.repeat(3_000_000))).message).toMatch(/too long/);
    });
  });

  describe('cache', () => {
    it('parses a template once', () => {
      const spy = jest.spyOn(Liquid.prototype, 'parse');
      try {
        const fresh = new ExpressionEngine();
        fresh.render('{{ data.cache_probe }}', { data: {} });
        fresh.render('{{ data.cache_probe }}', { data: {} });
        fresh.parse('{{ data.cache_probe }}');
        expect(spy).toHaveBeenCalledTimes(1);
      } finally {
        spy.mockRestore();
      }
    });

    it('renders each scope its own data from one parsed template', () => {
      const spy = jest.spyOn(Liquid.prototype, 'parse');
      try {
        const fresh = new ExpressionEngine();
        const mask = '{{ data.number | reveal_last: 4 }}';
        const fingerprint = 'fp {{ data.number }} {{ metadata.tenant }}';
        const first = { data: { number: '4242424242424242' }, metadata: { tenant: 'a' } };
        const second = { data: { number: '5555555555554444' }, metadata: { tenant: 'b' } };
        expect(fresh.render(mask, first)).toBe('XXXXXXXXXXXX4242');
        expect(fresh.render(mask, second)).toBe('XXXXXXXXXXXX4444');
        expect(fresh.renderString(fingerprint, first)).toBe('fp 4242424242424242 a');
        expect(fresh.renderString(fingerprint, second)).toBe('fp 5555555555554444 b');
        expect(fresh.renderDeep({ n: mask }, { data: {} })).toEqual({ n: undefined });
        expect(spy).toHaveBeenCalledTimes(2);
      } finally {
        spy.mockRestore();
      }
    });

    it('applies the limits of every render to a template it parsed before', () => {
      const fresh = new ExpressionEngine();
      const loop = '{% for i in (1..3000) %}{% for j in (1..3000) %}{% endfor %}{% endfor %}';
      const huge = '{{ (1..100000000) | size }}';
      for (let i = 0; i < 3; i++) {
        expect(errorOf(() => fresh.renderString(loop, {})).message).toMatch(/too long|too much/);
        expect(() => fresh.render(huge, {})).toThrow(ExpressionError);
      }
      // A cached template cheap on its own still draws on the request's budget, and stops when it is spent.
      const cheap = '{% for i in (1..2000) %}{{ i }}{% endfor %}';
      expect(fresh.renderString(cheap, {}).length).toBeGreaterThan(0);
      const outcomes = fresh.withBudget(() =>
        Array.from({ length: 40 }, () => {
          try {
            return fresh.renderString(cheap, {}).length > 0 ? 'ok' : 'empty';
          } catch (error) {
            return (error as Error).message;
          }
        }),
      );
      expect(outcomes.slice(0, 2)).toEqual(['ok', 'ok']);
      expect(outcomes.at(-1)).toMatch(/too much|too long/);
    });

    it('does not keep a template that failed to parse', () => {
      const fresh = new ExpressionEngine();
      for (let i = 0; i < 2; i++) {
        expect(errorOf(() => fresh.parse('{{ data | no_such_filter }}')).message).toMatch(/no_such_filter/);
      }
    });
  });
});
