import { EXPRESSION_LIMITS } from '../expression.limits';
import { fail } from './filter-kit';

/** Strings as they are; numbers (card numbers typed as numbers) as their decimal text. */
export function text(input: unknown): string {
  if (typeof input === 'string') {
    return input;
  }
  if ((typeof input === 'number' && Number.isFinite(input)) || typeof input === 'bigint') {
    return String(input);
  }
  return fail('expects a string or a number');
}

/** A non-negative whole number argument (a numeric string is accepted too). */
export function count(value: unknown, what: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) {
    return fallback;
  }
  const n = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    return fail(`${what} must be a non-negative whole number`);
  }
  if (n > EXPRESSION_LIMITS.filterCount) {
    return fail(`${what} must be at most ${EXPRESSION_LIMITS.filterCount}`);
  }
  return n;
}

/** A single character (one code point), `fallback` when the argument is left out. */
export function char(value: unknown, what: string, fallback: string): string {
  if (value === undefined) {
    return fallback;
  }
  if (typeof value !== 'string' || Array.from(value).length !== 1) {
    return fail(`${what} must be a single character`);
  }
  return value;
}

export function flag(value: unknown, what: string): boolean {
  if (value === undefined || value === null) {
    return false;
  }
  if (typeof value === 'boolean') {
    return value;
  }
  if (value === 'true' || value === 'false') {
    return value === 'true';
  }
  return fail(`${what} must be true or false`);
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
