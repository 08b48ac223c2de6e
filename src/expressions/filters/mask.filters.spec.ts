import { ExpressionEngine } from '../expression-engine';
import { ExpressionError } from '../expression.errors';
import { revealChars } from './mask.filters';

describe('mask filters', () => {
  const engine = new ExpressionEngine();
  const render = (template: string, v: unknown): unknown => engine.render(template, { v });

  describe('reveal_last', () => {
    it.each([
      ['4242424242424242', 'XXXXXXXXXXXX4242'],
      ['123-45-6789', 'XXX-XX-6789'],
      ['Sensitive Value', 'XXXXXXXXXXXalue'],
    ])('%s -> %s', (input, expected) => {
      expect(render('{{ v | reveal_last: 4 }}', input)).toBe(expected);
    });

    it('takes a mask character', () => {
      expect(render("{{ v | reveal_last: 2, '*' }}", '1234-5678')).toBe('****-**78');
    });

    it('counts only non-separator characters', () => {
      expect(render('{{ v | reveal_last: 5 }}', '1234-5678')).toBe('XXX4-5678');
    });

    it('leaves a value shorter than n as it is', () => {
      expect(render('{{ v | reveal_last: 10 }}', '123')).toBe('123');
    });

    it('masks everything with n = 0 and masks numbers as digit strings', () => {
      expect(render('{{ v | reveal_last: 0 }}', 'abc')).toBe('XXX');
      expect(render('{{ v | reveal_last: 4 }}', 4242424242424242)).toBe('XXXXXXXXXXXX4242');
    });

    it('passes null and undefined through', () => {
      expect(render('{{ v | reveal_last: 4 }}', null)).toBeNull();
      expect(render('{{ missing | reveal_last: 4 }}', 'x')).toBeUndefined();
    });

    it.each([
      ['{{ v | reveal_last: -1 }}', /n must be a non-negative whole number/],
      ["{{ v | reveal_last: 'a' }}", /n must be/],
      ['{{ v | reveal_last }}', /n must be/],
      ["{{ v | reveal_last: 4, 'XY' }}", /single character/],
    ])('rejects %s', (template, message) => {
      expect(() => render(template, '1234')).toThrow(message);
    });

    it('rejects an object input with an ExpressionError', () => {
      expect(() => render('{{ v | reveal_last: 4 }}', { a: 1 })).toThrow(ExpressionError);
      expect(() => render('{{ v | reveal_last: 4 }}', { a: 1 })).toThrow(
        'reveal_last: expects a string or a number',
      );
    });
  });

  describe('reveal', () => {
    it('shows the first and last characters', () => {
      expect(render('{{ v | reveal: 6, 4 }}', '4242424242424242')).toBe('424242XXXXXX4242');
    });

    it('masks separators unless keep is true', () => {
      expect(render("{{ v | reveal: 2, 2, '#' }}", '12-34-56')).toBe('12####56');
      expect(render("{{ v | reveal: 2, 2, '#', true }}", '12-34-56')).toBe('12-##-56');
    });

    it('leaves a short value as it is', () => {
      expect(render('{{ v | reveal: 2, 2 }}', 'abc')).toBe('abc');
    });

    it('rejects a non-boolean keep', () => {
      expect(() => render("{{ v | reveal: 1, 1, 'X', 'maybe' }}", 'abc')).toThrow(
        /keep must be true or false/,
      );
    });
  });

  describe('last4', () => {
    it('returns the last four characters', () => {
      expect(render('{{ v | last4 }}', '4242424242421234')).toBe('1234');
      expect(render('{{ v | last4 }}', 'ab')).toBe('ab');
    });
  });

  describe('revealChars', () => {
    it('masks whole code points', () => {
      expect(revealChars('😀😀ab', 0, 2, '*', false)).toBe('**ab');
    });
  });
});
