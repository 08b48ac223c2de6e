import { MAX_NESTING } from '../common/limits';

/** DoS limits of one parse or render, so a hostile template fails fast instead of hanging the server. */
export const EXPRESSION_LIMITS = {
  /** Characters of template text parsed in one call (a large proxy body can be a template). */
  parseLength: 2_000_000,
  /** Milliseconds one render may take; checked between template nodes (loop iterations included). */
  renderMs: 500,
  /** Milliseconds all the renders of one request may take together (ExpressionEngine.withBudget). */
  requestRenderMs: 1000,
  /**
   * Work units (expression-work.ts: template nodes, loop iterations, filter and operator calls with the
   * array elements they are given) one render may do: about 10 ms of the worst kind of work.
   */
  work: 10_000,
  /** Work units all the renders of one request may do together. */
  requestWork: 50_000,
  /** Characters or array slots liquidjs allocates per work unit (a range of 1,000,000 is 10,000 units). */
  memoryPerWorkUnit: 100,
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
