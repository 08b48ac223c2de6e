import { JsonPathSegment, parseJsonPath, selectJsonPath } from './filters/json-path';

/** What jsonPathShortcut() answers when the filter chain needs the engine. */
export const NO_SHORTCUT = Symbol('no shortcut');

/**
 * A chain that is only the `json` filter with one quoted path: no backslash or quote inside, so Liquid reads
 * the literal as it is written.
 */
const JSON_FILTER = /^\|\s*json:\s*(?:'([^'"\\]*)'|"([^'"\\]*)")\s*$/;

const MAX_CACHED_CHAINS = 1000;

/** Parsed paths by filter chain; null for a chain that is not one json filter or whose path does not parse. */
const paths = new Map<string, JsonPathSegment[] | null>();

function pathOf(filters: string): JsonPathSegment[] | null {
  let path = paths.get(filters);
  if (path === undefined) {
    const match = JSON_FILTER.exec(filters);
    path = null;
    if (match !== null) {
      try {
        path = parseJsonPath(match[1] ?? match[2]);
      } catch {
        // The engine gives the error.
      }
    }
    if (paths.size >= MAX_CACHED_CHAINS) {
      paths.clear();
    }
    paths.set(filters, path);
  }
  return path;
}

/**
 * What `{{ value <filters> }}` renders to, typed, when `filters` is exactly `| json: '<path>'` and the path
 * selects a value in `value`: the selected value itself, as the json filter returns it. NO_SHORTCUT for any
 * other chain, and where the filter would fail or pass `value` through (null), which the engine answers.
 */
export function jsonPathShortcut(value: unknown, filters: string): unknown {
  if (value === null || value === undefined) {
    return NO_SHORTCUT;
  }
  const path = pathOf(filters);
  if (path === null) {
    return NO_SHORTCUT;
  }
  const selected = selectJsonPath(value, path);
  return selected.found ? selected.value : NO_SHORTCUT;
}
