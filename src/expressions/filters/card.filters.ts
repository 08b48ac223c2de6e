import { isPlainObject, text } from './filter-args';
import { fail, VaultFilter } from './filter-kit';
import { revealChars } from './mask.filters';

/** The number of a card object (`{ number, ... }`) or the input itself when it is a number string. */
function cardNumber(input: unknown): string {
  if (isPlainObject(input)) {
    const number = input.number;
    if (typeof number !== 'string' && typeof number !== 'number') {
      return fail('expects a card number or a card object with a number');
    }
    return text(number);
  }
  return text(input);
}

function wholeNumber(value: unknown, what: string): number {
  const n = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    return fail(`${what} must be a whole number`);
  }
  return n;
}

/** `card_bin`: the first six digits (spaces and `-` ignored). */
export const cardBin: VaultFilter = (_run, input) => {
  const digits = cardNumber(input).replace(/[\s-]/g, '');
  if (!/^\d{6,}$/.test(digits)) {
    return fail('expects a card number of at least 6 digits');
  }
  return digits.slice(0, 6);
};

const EXP_TOKENS = ['YYYY', 'YY', 'MM', 'M'] as const;

/**
 * `card_exp: 'MM/YY'` on `{ expiration_month, expiration_year }`. The format is built from YYYY, YY, MM (zero
 * padded), M; every other character is copied, so any separator works.
 */
export const cardExp: VaultFilter = (_run, input, format = 'MM/YY') => {
  if (!isPlainObject(input)) {
    return fail('expects a card object with expiration_month and expiration_year');
  }
  if (typeof format !== 'string' || format.length > 32) {
    return fail('the format must be a string of at most 32 characters such as MM/YY');
  }
  const month = wholeNumber(input.expiration_month, 'expiration_month');
  const year = wholeNumber(input.expiration_year, 'expiration_year');
  if (month < 1 || month > 12) {
    return fail('expiration_month must be between 1 and 12');
  }
  const fullYear = String(year).padStart(4, '0');
  const parts: Record<(typeof EXP_TOKENS)[number], string> = {
    YYYY: fullYear,
    YY: fullYear.slice(-2),
    MM: String(month).padStart(2, '0'),
    M: String(month),
  };
  let out = '';
  for (let i = 0; i < format.length;) {
    const token = EXP_TOKENS.find((t) => format.startsWith(t, i));
    out += token ? parts[token] : format[i];
    i += token ? token.length : 1;
  }
  return out;
};

/** `card_mask`: the card number (of a card object or a number string) with all but the last 4 digits masked. */
export const cardMask: VaultFilter = (_run, input) => revealChars(cardNumber(input), 0, 4, 'X', true);

export const cardFilters: Record<string, VaultFilter> = {
  card_bin: cardBin,
  card_exp: cardExp,
  card_mask: cardMask,
};
