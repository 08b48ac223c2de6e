import { ExpressionEngine } from '../expression-engine';
import { luhnCheckDigit, passesLuhn } from '../../common/luhn';

describe('card filters', () => {
  const engine = new ExpressionEngine();
  const card = { number: '4242424242424242', expiration_month: 3, expiration_year: 2031 };
  const render = (template: string, data: unknown): unknown => engine.render(template, { data });

  describe('card_bin', () => {
    it('returns the first six digits of a card object or number', () => {
      expect(render('{{ data | card_bin }}', card)).toBe('424242');
      expect(render('{{ data | card_bin }}', '5555-5555-5555-4444')).toBe('555555');
    });

    it('rejects what is not a card number', () => {
      expect(() => render('{{ data | card_bin }}', '12ab')).toThrow(
        'card_bin: expects a card number of at least 6 digits',
      );
      expect(() => render('{{ data | card_bin }}', { cvc: '123' })).toThrow(/card object with a number/);
    });
  });

  describe('card_exp', () => {
    it.each([
      ['MM/YY', '03/31'],
      ['M/YYYY', '3/2031'],
      ['YYYY-MM', '2031-03'],
      ['MMYY', '0331'],
      ['MM.YY (exp)', '03.31 (exp)'],
    ])('formats %s', (format, expected) => {
      expect(render(`{{ data | card_exp: '${format}' }}`, card)).toBe(expected);
    });

    it('defaults to MM/YY and accepts numeric strings', () => {
      expect(render('{{ data | card_exp }}', { expiration_month: '12', expiration_year: '2030' })).toBe(
        '12/30',
      );
    });

    it('rejects a card without a valid expiration', () => {
      expect(() => render('{{ data | card_exp }}', { expiration_month: 13, expiration_year: 2030 })).toThrow(
        /between 1 and 12/,
      );
      expect(() => render('{{ data | card_exp }}', { expiration_month: 1 })).toThrow(/expiration_year/);
      expect(() => render('{{ data | card_exp }}', '12/30')).toThrow(/expects a card object/);
    });
  });

  describe('card_mask', () => {
    it('masks all but the last four digits of a card object or number', () => {
      expect(render('{{ data | card_mask }}', card)).toBe('XXXXXXXXXXXX4242');
      expect(render('{{ data | card_mask }}', '4242-4242-4242-4242')).toBe('XXXX-XXXX-XXXX-4242');
    });
  });

  describe('luhn', () => {
    it('computes check digits', () => {
      expect(luhnCheckDigit('424242424242424')).toBe('2');
      expect(luhnCheckDigit('7992739871')).toBe('3');
      expect(passesLuhn('4242424242424242')).toBe(true);
      expect(passesLuhn('4242424242424241')).toBe(false);
      expect(passesLuhn('42a2')).toBe(false);
    });
  });
});
