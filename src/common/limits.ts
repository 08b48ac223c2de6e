/**
 * The deepest object/array nesting the vault walks in request values: DTO bodies, expression renders,
 * detokenization. Deeper input is refused (or left alone) rather than risking the stack.
 */
export const MAX_NESTING = 64;

/**
 * Statuses the vault sends for a tenant's code (CustomHttpResponseError) or a destination: final answers
 * only (a 1xx would break HTTP framing) and real HTTP statuses (HTTP parsers take any three digits).
 */
export const MIN_CHOSEN_STATUS = 200;
export const MAX_CHOSEN_STATUS = 599;

export function isChosenStatus(status: unknown): status is number {
  return (
    typeof status === 'number' &&
    Number.isInteger(status) &&
    status >= MIN_CHOSEN_STATUS &&
    status <= MAX_CHOSEN_STATUS
  );
}

/**
 * Characters detokenization may produce in one request (/proxy bodies, reactor args), counted while the
 * references are substituted: a small body referencing one large token many times is refused (413) before
 * it is built, rather than expanded into gigabytes on the main thread.
 */
export const MAX_DETOKENIZED_CHARS = 10_000_000;
