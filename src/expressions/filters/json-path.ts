import { fail, VaultFilter } from './filter-kit';
import { isPlainObject } from './filter-args';

/** One step of a JSONPath: an object key or an array index (negative counts from the end). */
export type JsonPathSegment = { key: string } | { index: number };

const NAME_CHAR = /[\p{L}\p{N}_$-]/u;

/**
 * Parses the JSONPath subset the vault supports: `$`, `.name`, `['name']` / `["name"]` and `[index]`, nested.
 * Wildcards, recursive descent, slices, unions and filter expressions are rejected (they can match many values).
 * Hand-written on purpose rather than a JSONPath library: the subset is small, refusing the rest is the point,
 * and the popular JSONPath library has had code-execution advisories through its filter expressions.
 * Messages give positions, never the path text, since a path argument may come from data.
 */
export function parseJsonPath(path: string): JsonPathSegment[] {
  const source = path.trim();
  if (!source.startsWith('$')) {
    return fail('the JSONPath must start with $');
  }
  const segments: JsonPathSegment[] = [];
  let i = 1;
  while (i < source.length) {
    const c = source[i];
    if (c === '.') {
      if (source[i + 1] === '.') {
        return fail('recursive descent (..) is not supported in JSONPath');
      }
      if (source[i + 1] === '*') {
        return fail('wildcards are not supported in JSONPath');
      }
      let end = i + 1;
      while (end < source.length && NAME_CHAR.test(source[end])) {
        end++;
      }
      if (end === i + 1) {
        return fail(`the JSONPath has no name after the dot at character ${i + 1}`);
      }
      segments.push({ key: source.slice(i + 1, end) });
      i = end;
    } else if (c === '[') {
      i = readBracket(source, i, segments);
    } else {
      return fail(`the JSONPath has an unexpected character at position ${i + 1}`);
    }
  }
  return segments;
}

/** Reads `[...]` starting at `open`; returns the index after `]`. */
function readBracket(source: string, open: number, segments: JsonPathSegment[]): number {
  const first = source[open + 1];
  if (first === "'" || first === '"') {
    let key = '';
    let i = open + 2;
    while (i < source.length && source[i] !== first) {
      if (source[i] === '\\') {
        i++;
      }
      key += source[i] ?? '';
      i++;
    }
    if (source[i] !== first || source[i + 1] !== ']') {
      return fail(`the JSONPath has an unterminated [' '] at position ${open + 1}`);
    }
    segments.push({ key });
    return i + 2;
  }
  const close = source.indexOf(']', open);
  if (close < 0) {
    return fail(`the JSONPath has an unterminated [ at position ${open + 1}`);
  }
  const inner = source.slice(open + 1, close).trim();
  if (inner === '*') {
    return fail('wildcards are not supported in JSONPath');
  }
  if (inner.startsWith('?') || inner.startsWith('(')) {
    return fail('filter expressions are not supported in JSONPath');
  }
  if (inner.includes(':') || inner.includes(',')) {
    return fail('slices and unions are not supported in JSONPath');
  }
  if (!/^-?\d+$/.test(inner)) {
    return fail(`the JSONPath needs a quoted name or a whole-number index at position ${open + 1}`);
  }
  segments.push({ index: Number(inner) });
  return close + 1;
}

/** The one value at `path` in `root`, or `found: false`. Only own properties are visible. */
export function selectJsonPath(
  root: unknown,
  segments: JsonPathSegment[],
): { found: boolean; value?: unknown } {
  let current = root;
  for (const segment of segments) {
    if ('key' in segment) {
      if (!isPlainObject(current) || !Object.prototype.hasOwnProperty.call(current, segment.key)) {
        return { found: false };
      }
      current = current[segment.key];
    } else {
      if (!Array.isArray(current)) {
        return { found: false };
      }
      const index = segment.index < 0 ? current.length + segment.index : segment.index;
      if (index < 0 || index >= current.length) {
        return { found: false };
      }
      current = current[index] as unknown;
    }
  }
  return { found: true, value: current };
}

/** `json: '<JSONPath>'`: the single value the path selects; no match is an error. */
export const jsonPath: VaultFilter = (_run, input, path) => {
  if (typeof path !== 'string') {
    return fail('expects a JSONPath string such as $.number');
  }
  const result = selectJsonPath(input, parseJsonPath(path));
  if (!result.found) {
    return fail('the JSONPath matched no value (exactly one is required)');
  }
  return result.value;
};
