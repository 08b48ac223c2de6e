import { MAX_NESTING } from '../common/limits';

/** DoS limits of one parse or render, so a hostile template fails fast instead of hanging the server. */
export const EXPRESSION_LIMITS = {
  /** Characters of template text parsed in one call (a large proxy body can be a template). */
  parseLength: 2_000_000,
  /** Milliseconds one render may take; checked between template nodes (loop iterations included). */
  renderMs: 500,
  /** Milliseconds all the renders of one request may take together (ExpressionEngine.withBudget). */
  requestRenderMs: 1000,
  /** Characters (and array slots) one render may allocate, output included. */
  memory: 10_000_000,
  /** Parsed templates kept in the LRU cache, and the longest template worth caching. */
  cacheEntries: 1000,
  cacheTemplateLength: 10_000,
  /** Deepest object/array nesting renderDeep walks. */
  depth: MAX_NESTING,
  /** Largest count/length argument a filter accepts. */
  filterCount: 1_000_000,
} as const;
