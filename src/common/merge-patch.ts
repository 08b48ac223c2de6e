type JsonObject = Record<string, unknown>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * RFC 7386 JSON Merge Patch. Pure: inputs are never mutated; the result may share unchanged
 * subtrees of `target` and non-object values of `patch`.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) {
    return patch;
  }
  const result: JsonObject = {};
  if (isObject(target)) {
    for (const [name, value] of Object.entries(target)) {
      setOwn(result, name, value);
    }
  }
  for (const [name, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[name];
    } else {
      const current = Object.hasOwn(result, name) ? result[name] : undefined;
      setOwn(result, name, mergePatch(current, value));
    }
  }
  return result;
}

// A JSON body may carry a "__proto__" member; plain assignment would change the prototype instead
function setOwn(object: JsonObject, name: string, value: unknown): void {
  Object.defineProperty(object, name, { value, enumerable: true, writable: true, configurable: true });
}
