import { ExpressionEngine } from '../expression-engine';
import { createAliasFilters, RandomInt } from './alias.filters';
import { FilterRun } from './filter-kit';
import { passesLuhn } from '../../common/luhn';

const run: FilterRun = { charge: () => undefined };

/** Always the first letter/digit of each alphabet, so aliases are predictable. */
const zero: RandomInt = () => 0;

describe('alias filters', () => {
  const fixed = createAliasFilters(zero);
  const engine = new ExpressionEngine();

  describe('alias_preserve_format', () => {
    it('keeps the ends and separators, randomizes digits and letters by class', () => {
      expect(fixed.alias_preserve_format(run, '4242-4242-Ab-c1', 2, 2)).toBe('4200-0000-Aa-c1');
      expect(fixed.alias_preserve_format(run, 'Héllo W0rld', 0, 0)).toBe('Aaaaa A0aaa');
    });

    it('varies with real randomness and keeps the shape', () => {
      const a = engine.render('{{ v | alias_preserve_format: 4, 4 }}', {
        v: '4242-4242-4242-4242',
      }) as string;
      expect(a).toMatch(/^4242-\d{4}-\d{4}-4242$/);
    });
  });

  describe('alias_preserve_length', () => {
    it('keeps the ends and replaces every middle character', () => {
      expect(fixed.alias_preserve_length(run, 'ab-cd-ef', 1, 1)).toBe('a000000f');
      const a = engine.render('{{ v | alias_preserve_length: 0, 0 }}', { v: 'secret-value' }) as string;
      expect(a).toMatch(/^[A-Za-z0-9]{12}$/);
    });

    it('defaults first and last to 0', () => {
      expect(fixed.alias_preserve_length(run, 'abc')).toBe('000');
    });
  });

  describe('alias_card', () => {
    it('keeps the BIN and length of a card number and passes Luhn', () => {
      for (let i = 0; i < 20; i++) {
        const alias = engine.render('{{ v | alias_card }}', { v: '5555 5555 5555 4444' }) as string;
        expect(alias).toMatch(/^555555\d{10}$/);
        expect(passesLuhn(alias)).toBe(true);
      }
      const amex = engine.render('{{ v | alias_card }}', { v: '378282246310005' }) as string;
      expect(amex).toMatch(/^378282\d{9}$/);
      expect(passesLuhn(amex)).toBe(true);
    });

    it('makes 16 random digits from anything else', () => {
      const alias = engine.render("{{ 'not a card' | alias_card }}", {}) as string;
      expect(alias).toMatch(/^[1-9]\d{15}$/);
      expect(passesLuhn(alias)).toBe(true);
      expect(fixed.alias_card(run, {})).toBe('1000000000000008');
    });
  });
});
