import { addError, FieldErrors } from './field-errors';

const MAX_KEYS = 100;
const MAX_KEY = 200;
const MAX_VALUE = 2000;

/**
 * A metadata map (string keys to string values, non-sensitive) read from `value`, its faults added to
 * `errors` under `path`; null when it is no object or has too many keys to look at.
 */
export function readStringMap(
  value: unknown,
  path: string,
  errors: FieldErrors,
): Record<string, string> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    addError(errors, path, 'must be an object of string values');
    return null;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_KEYS) {
    addError(errors, path, `must have at most ${MAX_KEYS} keys`);
    return null;
  }
  for (const [key, v] of entries) {
    if (key === '' || key.length > MAX_KEY) {
      addError(errors, path, `keys must be 1 to ${MAX_KEY} characters`);
    } else if (typeof v !== 'string' || v.length > MAX_VALUE) {
      addError(errors, `${path}.${key}`, `must be a string of at most ${MAX_VALUE} characters`);
    }
  }
  return Object.fromEntries(entries) as Record<string, string>;
}
