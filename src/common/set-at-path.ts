/**
 * Sets `value` at `path` in `target`, making plain objects on the way (a non-object in the way is replaced by
 * one). Own properties only, defined rather than assigned: a `__proto__` segment is a name, never the prototype.
 */
export function setAtPath<T>(target: { [key: string]: T }, path: string[], value: T): void {
  let current = target;
  for (const segment of path.slice(0, -1)) {
    const next = Object.prototype.hasOwnProperty.call(current, segment) ? current[segment] : undefined;
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) {
      current = next as { [key: string]: T };
    } else {
      const created: { [key: string]: T } = {};
      defineOwn(current, segment, created as T);
      current = created;
    }
  }
  defineOwn(current, path[path.length - 1], value);
}

function defineOwn<T>(target: { [key: string]: T }, name: string, value: T): void {
  Object.defineProperty(target, name, { value, enumerable: true, writable: true, configurable: true });
}
