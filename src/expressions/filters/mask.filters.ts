import { char, count, flag, text } from './filter-args';
import { VaultFilter } from './filter-kit';

/** The only character masks leave in place: `-` in card numbers, SSNs, IBAN-like groupings. */
export const SEPARATOR = '-';

/**
 * Replaces with `mask` every character except the first `first` and the last `last` ones.
 * With `keepSeparators`, `-` stays and is not counted. Works on code points, so a masked emoji is one mask.
 */
export function revealChars(
  value: string,
  first: number,
  last: number,
  mask: string,
  keepSeparators: boolean,
): string {
  const chars = Array.from(value);
  const counted = keepSeparators ? chars.filter((c) => c !== SEPARATOR).length : chars.length;
  let index = 0;
  return chars
    .map((c) => {
      if (keepSeparators && c === SEPARATOR) {
        return c;
      }
      const position = index++;
      return position < first || position >= counted - last ? c : mask;
    })
    .join('');
}

/** `reveal_last: n[, char]`: all but the last n characters masked, `-` kept and not counted. */
export const revealLast: VaultFilter = (_run, input, n, mask) =>
  revealChars(text(input), 0, count(n, 'n'), char(mask, 'char', 'X'), true);

/** `reveal: first, last[, char[, keep]]`: the middle masked; `keep` true keeps `-` separators. */
export const reveal: VaultFilter = (_run, input, first, last, mask, keep) =>
  revealChars(
    text(input),
    count(first, 'first'),
    count(last, 'last'),
    char(mask, 'char', 'X'),
    flag(keep, 'keep'),
  );

/** `last4`: the last four characters. */
export const last4: VaultFilter = (_run, input) => Array.from(text(input)).slice(-4).join('');

export const maskFilters: Record<string, VaultFilter> = {
  reveal_last: revealLast,
  reveal,
  last4,
};
