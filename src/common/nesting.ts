/**
 * True when `value` nests objects or arrays deeper than `limit` levels. Recursive, but never more than
 * `limit` calls deep, so it cannot overflow the stack however deep the value goes.
 */
export function nestedDeeperThan(value: unknown, limit: number, depth = 0): boolean {
  if (typeof value !== 'object' || value === null) {
    return false;
  }
  if (depth >= limit) {
    return true;
  }
  const children: unknown[] = Array.isArray(value) ? value : Object.values(value);
  for (const child of children) {
    if (nestedDeeperThan(child, limit, depth + 1)) {
      return true;
    }
  }
  return false;
}

/**
 * Marks a request body whose nesting has been checked against MAX_NESTING (request-body.ts, checkParsedBody).
 * A symbol member, which JSON, Object.keys and the validators do not see: a WeakSet of every body costs more,
 * its table growing with dead bodies between collections.
 */
const DEPTH_CHECKED = Symbol('depthChecked');

/** Notes that `body` nests no deeper than MAX_NESTING, so the validation pipe need not walk it again. */
export function markDepthChecked(body: object): void {
  (body as { [DEPTH_CHECKED]?: true })[DEPTH_CHECKED] = true;
}

export function isDepthChecked(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.hasOwn(value, DEPTH_CHECKED);
}
