/** True when `value` nests objects or arrays deeper than `limit` levels; iterative, so it cannot overflow itself. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!;
    if (typeof current !== 'object' || current === null) {
      continue;
    }
    if (depth >= limit) {
      return true;
    }
    for (const child of Object.values(current)) {
      if (typeof child === 'object' && child !== null) {
        pending.push([child, depth + 1]);
      }
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
