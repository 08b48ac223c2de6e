export const TOKEN_ID_MIN_LENGTH = 3;
export const TOKEN_ID_MAX_LENGTH = 400;

const FORBIDDEN = /[#/\\+?[\]|&=%<>{}^]/;
const WHITESPACE_OR_CONTROL = /[\s\p{Cc}]/u;
// With the u flag \p{Cs} matches only unpaired surrogates, which Postgres cannot store as UTF-8
const LONE_SURROGATE = /\p{Cs}/u;

/** Custom token id per DESIGN §7: 3-400 characters, none of # / \ + ? [ ] | & = % < > { } ^ and no whitespace/control characters. Returns an error message or null. (Alias expressions — strings containing '{{' — are handled by the caller; this validates a final id.) */
export function validateTokenId(id: string): string | null {
  if (typeof id !== 'string') {
    return 'must be a string';
  }
  if (LONE_SURROGATE.test(id)) {
    return 'must be valid Unicode text';
  }
  // Count code points, as the database does, not UTF-16 units
  const length = [...id].length;
  if (length < TOKEN_ID_MIN_LENGTH || length > TOKEN_ID_MAX_LENGTH) {
    return `must be ${TOKEN_ID_MIN_LENGTH} to ${TOKEN_ID_MAX_LENGTH} characters long`;
  }
  if (FORBIDDEN.test(id)) {
    return 'must not contain any of # / \\ + ? [ ] | & = % < > { } ^';
  }
  if (WHITESPACE_OR_CONTROL.test(id)) {
    return 'must not contain whitespace or control characters';
  }
  return null;
}

/** Shortest data value an id may not contain: card, account and social security numbers are all longer. */
const MIN_DATA_VALUE_LENGTH = 8;

/**
 * True when the id holds a whole string or number of the token data (spec §2.1: an id holds no sensitive
 * data). Ids are returned to callers whose rules redact the data and appear in request paths, so an alias
 * such as `{{ data.number }}` would publish the card number.
 */
export function idContainsData(id: string, data: unknown): boolean {
  const pending: unknown[] = [data];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value === 'string' || typeof value === 'number') {
      const text = String(value);
      if (text.length >= MIN_DATA_VALUE_LENGTH && id.includes(text)) {
        return true;
      }
    } else if (typeof value === 'object' && value !== null) {
      pending.push(...(Object.values(value) as unknown[]));
    }
  }
  return false;
}
