import { types } from 'pg';

type Parser = (text: string) => unknown;

/** pg's own parser of `timestamp with time zone` (postgres-date), for every form the short path leaves. */
const parseAny = types.getTypeParser(types.builtins.TIMESTAMPTZ, 'text') as Parser;

/**
 * A `timestamptz` as PostgreSQL prints it in a UTC session (`2026-12-07 10:10:00.123456+00`) read by position
 * into the Date pg's own parser makes of it (the fraction's milliseconds computed as it computes them); any
 * other form (another offset, a year outside 1000-9999, BC, infinity) goes to that parser. pg's parser tries
 * three regular expressions a value, which a list page of 20 tokens paid for each of its dates.
 */
export function parseTimestamptz(text: string): unknown {
  const n = text.length;
  if (
    n < 22 ||
    n > 29 ||
    n === 23 ||
    text.charCodeAt(4) !== 45 ||
    text.charCodeAt(10) !== 32 ||
    text.charCodeAt(n - 3) !== 43 ||
    text.charCodeAt(n - 2) !== 48 ||
    text.charCodeAt(n - 1) !== 48 ||
    (n > 22 && text.charCodeAt(19) !== 46) ||
    text.charCodeAt(0) === 48
  ) {
    return parseAny(text);
  }
  const ms = n === 22 ? 0 : 1000 * parseFloat(text.slice(19, n - 3));
  return new Date(
    Date.UTC(
      digits(text, 0, 4),
      digits(text, 5, 7) - 1,
      digits(text, 8, 10),
      digits(text, 11, 13),
      digits(text, 14, 16),
      digits(text, 17, 19),
      ms,
    ),
  );
}

/** The number the decimal digits text[from, to) write (PostgreSQL prints only digits there). */
function digits(text: string, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) {
    value = value * 10 + text.charCodeAt(i) - 48;
  }
  return value;
}

/** pg's type parsers, parseTimestamptz for `timestamptz` in text: the pool's `types` (database.ts). */
export const vaultTypes = {
  getTypeParser(oid: number, format: 'text' | 'binary' = 'text'): unknown {
    return oid === (types.builtins.TIMESTAMPTZ as number) && format === 'text'
      ? parseTimestamptz
      : types.getTypeParser(oid, format);
  },
};
