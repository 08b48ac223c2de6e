import { ApiError } from '../common/api-error';
import type { FormulaRequestParameter } from '../reactor-formulas/reactor-formula.entity';
import { castTo, prepareArgs } from './react-args';

const param = (
  name: string,
  type: FormulaRequestParameter['type'],
  optional = false,
): FormulaRequestParameter => ({
  name,
  type,
  optional,
  description: null,
});

function errorsOf(fn: () => unknown): Record<string, string[]> | undefined {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) {
      return err.errors;
    }
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('prepareArgs', () => {
  it('keeps declared parameters and drops the rest, nested ones by dotted name', () => {
    const params = [
      param('card.number', 'string'),
      param('card.expiration_year', 'number'),
      param('amount', 'number'),
    ];
    const args = { card: { number: '4242', expiration_year: 2030, cvc: '123' }, amount: '10.5', extra: true };
    expect(prepareArgs(params, args)).toEqual({
      card: { number: '4242', expiration_year: 2030 },
      amount: 10.5,
    });
  });

  it('names every missing required parameter and skips missing optional ones', () => {
    const params = [param('a', 'string'), param('b.c', 'number'), param('d', 'boolean', true)];
    expect(errorsOf(() => prepareArgs(params, {}))).toEqual({
      'args.a': ['is required'],
      'args.b.c': ['is required'],
    });
    expect(prepareArgs([param('d', 'boolean', true)], undefined)).toEqual({});
  });

  it('casts what can be cast and rejects the rest without quoting values', () => {
    expect(castTo('number', '42')).toBe(42);
    expect(castTo('number', ' -1.5e2 ')).toBe(-150);
    expect(castTo('number', '4x')).toBeUndefined();
    expect(castTo('number', '')).toBeUndefined();
    expect(castTo('number', true)).toBeUndefined();
    expect(castTo('boolean', 'TRUE')).toBe(true);
    expect(castTo('boolean', 'false')).toBe(false);
    expect(castTo('boolean', 'yes')).toBeUndefined();
    expect(castTo('boolean', 1)).toBeUndefined();
    expect(castTo('string', 12)).toBe('12');
    expect(castTo('string', { a: 1 })).toBeUndefined();
    const errors = errorsOf(() => prepareArgs([param('n', 'number')], { n: 'secret-4111' }));
    expect(JSON.stringify(errors)).not.toContain('secret');
  });

  it('treats a parent that is not an object as missing, and refuses a non-object args', () => {
    expect(errorsOf(() => prepareArgs([param('card.number', 'string')], { card: '4242' }))).toEqual({
      'args.card.number': ['is required'],
    });
    expect(errorsOf(() => prepareArgs([], ['a']))).toEqual({ args: ['must be an object'] });
  });

  it('never walks the prototype chain', () => {
    expect(errorsOf(() => prepareArgs([param('constructor.name', 'string')], {}))).toEqual({
      'args.constructor.name': ['is required'],
    });
    const out = prepareArgs([param('__proto__.x', 'string', true)], JSON.parse('{"__proto__": {"x": "y"}}'));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toEqual(['__proto__']);
  });
});
