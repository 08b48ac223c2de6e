import { ApiError } from '../common/api-error';

export interface SearchTerms {
  /** Values to look up in the blind indexes. */
  data: string[];
  ids: string[];
  types: string[];
  metadata: Record<string, string>;
}

const TERM = /\s*([A-Za-z_][\w.]*):("(?:[^"\\]|\\.)*"|[^\s"]+)\s*/y;
const MAX_QUERY = 2000;
const MAX_TERMS = 20;

/**
 * Parses a search query: whitespace-separated terms `data:<value>`, `id:<id>`, `type:<type>` and
 * `metadata.<key>:<value>`, all ANDed (an explicit `AND` between terms is allowed). Values with spaces are
 * double-quoted, with `\"` and `\\` escapes.
 */
export function parseSearchQuery(query: string): SearchTerms {
  const terms: SearchTerms = { data: [], ids: [], types: [], metadata: {} };
  if (query.length > MAX_QUERY) {
    throw ApiError.field('query', `must be at most ${MAX_QUERY} characters`);
  }
  const text = query.replace(/\s+AND\s+/g, ' ').trim();
  if (text === '') {
    throw ApiError.field('query', 'must contain at least one term such as data:<value>');
  }
  TERM.lastIndex = 0;
  let count = 0;
  while (TERM.lastIndex < text.length) {
    const match = TERM.exec(text);
    if (match === null) {
      throw ApiError.field('query', 'must be terms of the form field:value (data, id, type, metadata.<key>)');
    }
    count += 1;
    if (count > MAX_TERMS) {
      throw ApiError.field('query', `must have at most ${MAX_TERMS} terms`);
    }
    const [, field, raw] = match;
    const value = raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(["\\])/g, '$1') : raw;
    if (field === 'data') {
      terms.data.push(value);
    } else if (field === 'id') {
      terms.ids.push(value);
    } else if (field === 'type') {
      terms.types.push(value);
    } else if (field.startsWith('metadata.') && field.length > 'metadata.'.length) {
      // defineProperty: a `metadata.__proto__` term stays a term instead of setting the prototype
      Object.defineProperty(terms.metadata, field.slice('metadata.'.length), {
        value: value.toLowerCase(),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      throw ApiError.field('query', 'fields are data, id, type and metadata.<key>');
    }
  }
  return terms;
}
