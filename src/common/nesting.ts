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

/** Request bodies whose nesting has been checked against MAX_NESTING (request-body.ts, checkParsedBody). */
const depthChecked = new WeakSet<object>();

/** Notes that `body` nests no deeper than MAX_NESTING, so the validation pipe need not walk it again. */
export function markDepthChecked(body: object): void {
  depthChecked.add(body);
}

export function isDepthChecked(value: unknown): boolean {
  return typeof value === 'object' && value !== null && depthChecked.has(value);
}
