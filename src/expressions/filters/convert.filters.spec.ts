import { ExpressionEngine } from '../expression-engine';

describe('conversion filters', () => {
  const engine = new ExpressionEngine();
  const render = (template: string, v: unknown): unknown => engine.render(template, { v });

  describe('to_number', () => {
    it.each([
      ['42', 42],
      [' -3.5 ', -3.5],
      ['1e3', 1000],
      [7, 7],
      [true, 1],
    ])('%p -> %p', (input, expected) => {
      expect(render('{{ v | to_number }}', input)).toBe(expected);
    });

    it.each(['abc', '', '0x10', '12abc', '42424242424242424242'])('rejects %p', (input) => {
      expect(() => render('{{ v | to_number }}', input)).toThrow(/^to_number: /);
    });
  });

  describe('to_boolean', () => {
    it.each([
      ['true', true],
      ['FALSE', false],
      ['1', true],
      ['no', false],
      [0, false],
      [2, true],
      [true, true],
    ])('%p -> %p', (input, expected) => {
      expect(render('{{ v | to_boolean }}', input)).toBe(expected);
    });

    it('rejects other strings', () => {
      expect(() => render('{{ v | to_boolean }}', 'maybe')).toThrow(
        'to_boolean: expects true, false, yes, no, 1 or 0',
      );
    });
  });

  describe('to_string', () => {
    it('turns scalars into text and objects into JSON', () => {
      expect(render('{{ v | to_string }}', 12)).toBe('12');
      expect(render('{{ v | to_string }}', false)).toBe('false');
      expect(render('{{ v | to_string }}', 'x')).toBe('x');
      expect(render('{{ v | to_string }}', { a: [1] })).toBe('{"a":[1]}');
      expect(render('{{ v | to_string }}', null)).toBeNull();
    });
  });

  describe('stringify', () => {
    it('gives compact JSON, with strings as JSON literals', () => {
      expect(render('{{ v | stringify }}', { a: 1, b: [true, null] })).toBe('{"a":1,"b":[true,null]}');
      expect(render('{{ v | json_stringify }}', 'ab"c')).toBe('"ab\\"c"');
      expect(render('{{ v | stringify }}', 12)).toBe('12');
    });

    it('rejects values JSON cannot hold', () => {
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      expect(() => render('{{ v | stringify }}', circular)).toThrow(
        'stringify: the value cannot be serialized to JSON',
      );
    });
  });

  describe('pad_left / pad_right', () => {
    it('pads to a length with a character', () => {
      expect(render("{{ v | pad_left: 6, '0' }}", '42')).toBe('000042');
      expect(render("{{ v | pad_right: 5, '*' }}", 'ab')).toBe('ab***');
      expect(render('{{ v | pad_left: 4 }}', 7)).toBe('   7');
      expect(render("{{ v | pad_left: 2, '0' }}", 'abcd')).toBe('abcd');
    });

    it('rejects bad arguments', () => {
      expect(() => render("{{ v | pad_left: 6, '00' }}", '1')).toThrow(/single character/);
      expect(() => render("{{ v | pad_right: -1, '0' }}", '1')).toThrow(/non-negative/);
      expect(() => render("{{ v | pad_right: 100000000, '0' }}", '1')).toThrow(/at most/);
    });
  });
});
