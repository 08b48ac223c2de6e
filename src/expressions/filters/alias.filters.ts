import { count, text } from './filter-args';
import { VaultFilter } from './filter-kit';
import { luhnCheckDigit } from '../../common/luhn';

/** A uniform random integer in [0, max); production passes node:crypto randomInt, tests a fixed sequence. */
export type RandomInt = (max: number) => number;

const DIGITS = '0123456789';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const ALPHANUMERIC = DIGITS + UPPER + LOWER;

/**
 * Rebuilds `value` keeping its first `first` and last `last` characters (by position) and replacing the
 * others with `replace(char)`.
 */
function aliasMiddle(value: string, first: number, last: number, replace: (c: string) => string): string {
  const chars = Array.from(value);
  return chars.map((c, i) => (i < first || i >= chars.length - last ? c : replace(c))).join('');
}

export function createAliasFilters(randomInt: RandomInt): Record<string, VaultFilter> {
  const pick = (alphabet: string): string => alphabet[randomInt(alphabet.length)];
  const sameClass = (c: string): string => {
    if (/\p{Nd}/u.test(c)) {
      return pick(DIGITS);
    }
    if (/\p{Lu}/u.test(c)) {
      return pick(UPPER);
    }
    // Lowercase and caseless letters alike, so no letter of the original survives.
    return /\p{L}/u.test(c) ? pick(LOWER) : c;
  };

  /** `alias_preserve_format: first, last`: digits and letters of the middle randomized, separators kept. */
  const aliasPreserveFormat: VaultFilter = (_run, input, first, last) =>
    aliasMiddle(text(input), count(first, 'first', 0), count(last, 'last', 0), sameClass);

  /** `alias_preserve_length: first, last`: every middle character replaced by a random letter or digit. */
  const aliasPreserveLength: VaultFilter = (_run, input, first, last) =>
    aliasMiddle(text(input), count(first, 'first', 0), count(last, 'last', 0), () => pick(ALPHANUMERIC));

  /**
   * `alias_card`: a random Luhn-valid card number. A 13-19 digit input keeps its length and its BIN (first 6
   * digits, so the brand survives); any other input gets 16 random digits.
   */
  const aliasCard: VaultFilter = (_run, input) => {
    const digits =
      typeof input === 'string' || typeof input === 'number' ? text(input).replace(/[\s-]/g, '') : '';
    const isCard = /^\d{13,19}$/.test(digits);
    let payload = isCard ? digits.slice(0, 6) : pick('123456789');
    const length = isCard ? digits.length : 16;
    while (payload.length < length - 1) {
      payload += pick(DIGITS);
    }
    return payload + luhnCheckDigit(payload);
  };

  return {
    alias_preserve_format: aliasPreserveFormat,
    alias_preserve_length: aliasPreserveLength,
    alias_card: aliasCard,
  };
}
