import { char, count, text } from './filter-args';
import { fail, VaultFilter } from './filter-kit';
import { toJson } from './json.filters';

const NUMERIC = /^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;
const INTEGER = /^[+-]?\d+$/;

/** `to_number`: numbers as they are, numeric strings parsed, booleans 1/0; anything else is an error. */
export const toNumber: VaultFilter = (_run, input) => {
  if (typeof input === 'number') {
    return input;
  }
  if (typeof input === 'boolean') {
    return input ? 1 : 0;
  }
  const source = typeof input === 'string' ? input.trim() : '';
  if (!NUMERIC.test(source)) {
    return fail('expects a numeric string');
  }
  const n = Number(source);
  if (INTEGER.test(source) && !Number.isSafeInteger(n)) {
    return fail('the number has too many digits to convert exactly');
  }
  return n;
};

const TRUE_WORDS = new Set(['true', '1', 'yes']);
const FALSE_WORDS = new Set(['false', '0', 'no']);

/** `to_boolean`: true/false/1/0/yes/no (any case) and numbers (0 is false); anything else is an error. */
export const toBoolean: VaultFilter = (_run, input) => {
  if (typeof input === 'boolean') {
    return input;
  }
  if (typeof input === 'number') {
    return input !== 0;
  }
  const word = typeof input === 'string' ? input.trim().toLowerCase() : '';
  if (TRUE_WORDS.has(word) || FALSE_WORDS.has(word)) {
    return TRUE_WORDS.has(word);
  }
  return fail('expects true, false, yes, no, 1 or 0');
};

/** `to_string`: strings as they are, numbers and booleans as text, objects and arrays as compact JSON. */
export const toText: VaultFilter = (_run, input) => {
  if (typeof input === 'string') {
    return input;
  }
  if (typeof input === 'number' || typeof input === 'boolean' || typeof input === 'bigint') {
    return String(input);
  }
  return toJson(input);
};

function pad(side: 'left' | 'right'): VaultFilter {
  return (run, input, length, fill) => {
    const value = text(input);
    const target = count(length, 'length');
    const fillChar = char(fill, 'char', ' ');
    run.charge(target);
    return side === 'left' ? value.padStart(target, fillChar) : value.padEnd(target, fillChar);
  };
}

export const convertFilters: Record<string, VaultFilter> = {
  to_number: toNumber,
  to_boolean: toBoolean,
  to_string: toText,
  /** `pad_left: len, char`: padded on the left to `len` characters with `char` (a space by default). */
  pad_left: pad('left'),
  pad_right: pad('right'),
};
