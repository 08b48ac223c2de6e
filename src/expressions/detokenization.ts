import { MAX_NESTING } from '../common/limits';

/** A `{{ <id> }}`, `{{ <id> | filters }}` or `{{ token: <id> | filters }}` reference inside a string. */
export interface TokenReference {
  start: number;
  end: number;
  id: string;
  /** `token:` form: the whole token object instead of its data. */
  wholeToken: boolean;
  /** The filter chain as written, starting with `|`, or ''. */
  filters: string;
}

// Token ids never contain whitespace, `|`, `{` or `}` (DESIGN §7 id rules), so this cannot over-match.
const REFERENCE = /\{\{\s*(token:\s*)?([^\s|{}]+)\s*(\|[^{}]*)?\}\}/g;

export function findReferences(text: string): TokenReference[] {
  const references: TokenReference[] = [];
  for (const match of text.matchAll(REFERENCE)) {
    references.push({
      start: match.index,
      end: match.index + match[0].length,
      id: match[2],
      wholeToken: match[1] !== undefined,
      filters: (match[3] ?? '').trim(),
    });
  }
  return references;
}

/**
 * The ids referenced anywhere inside a JSON value (strings and object keys are not confused: keys are left
 * alone), each with whether a `token:` reference wants the whole token rather than only its data.
 */
export function collectReferences(
  value: unknown,
  into: Map<string, boolean> = new Map(),
  depth = 0,
  /** Filled with each string's references, for substitute to reuse rather than search the string again. */
  found?: Map<string, TokenReference[]>,
): Map<string, boolean> {
  if (depth > MAX_NESTING) {
    return into;
  }
  if (typeof value === 'string') {
    const references = findReferences(value);
    found?.set(value, references);
    noteReferences(references, into);
  } else if (Array.isArray(value)) {
    value.forEach((v) => collectReferences(v, into, depth + 1, found));
  } else if (typeof value === 'object' && value !== null) {
    Object.values(value).forEach((v) => collectReferences(v, into, depth + 1, found));
  }
  return into;
}

/** Adds references to `into` as collectReferences counts them: an id is whole once any reference wants it so. */
export function noteReferences(
  references: TokenReference[],
  into: Map<string, boolean> = new Map(),
): Map<string, boolean> {
  for (const r of references) {
    into.set(r.id, r.wholeToken || into.get(r.id) === true);
  }
  return into;
}

/**
 * Replaces references in a string. A string that is exactly one reference takes the type of its value
 * (a card object stays an object); otherwise each value is written into the text.
 */
export function substitute(
  text: string,
  resolve: (reference: TokenReference) => unknown,
  asText: (value: unknown) => string,
  /** findReferences(text), when the caller has it already. */
  references: TokenReference[] = findReferences(text),
): unknown {
  if (references.length === 0) {
    return text;
  }
  if (references.length === 1 && references[0].start === 0 && references[0].end === text.length) {
    return resolve(references[0]);
  }
  let out = '';
  let cursor = 0;
  for (const reference of references) {
    out += text.slice(cursor, reference.start) + asText(resolve(reference));
    cursor = reference.end;
  }
  return out + text.slice(cursor);
}
