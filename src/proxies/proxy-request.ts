import type { IncomingHttpHeaders } from 'node:http';
import { ApiError } from '../common/api-error';
import { HOP_BY_HOP_HEADERS } from '../outbound';

/** The routing and credential headers of /proxy: read by the vault, never sent on. */
export const PROXY_KEY_HEADER = 'bt-proxy-key';
export const PROXY_URL_HEADER = 'bt-proxy-url';
export const PROXY_KEY_QUERY = 'bt-proxy-key';
export const TRACE_HEADER = 'bt-trace-id';
export const DESTINATION_STATUS_HEADER = 'BT-PROXY-DESTINATION-STATUS';

const VAULT_HEADERS = new Set(['bt-api-key', PROXY_KEY_HEADER, PROXY_URL_HEADER]);
/** Set by the outbound client itself (framing and the destination's host). */
const CLIENT_OWNED = new Set(['host', 'content-length', 'expect']);

export type HeaderMap = Record<string, string | string[]>;

/**
 * The caller's headers as the destination gets them (spec §4.5 rule 3): everything but the vault's own
 * headers, hop-by-hop fields (and those the caller's Connection header names) and framing.
 */
export function forwardedHeaders(headers: IncomingHttpHeaders): HeaderMap {
  const named = connectionNamed(headers.connection);
  const out: HeaderMap = {};
  for (const [name, value] of Object.entries(headers)) {
    if (
      value === undefined ||
      VAULT_HEADERS.has(name) ||
      CLIENT_OWNED.has(name) ||
      HOP_BY_HOP_HEADERS.has(name) ||
      named.has(name)
    ) {
      continue;
    }
    out[name] = value;
  }
  return out;
}

/** The destination's response headers as our caller gets them: raw names and order, minus hop-by-hop. */
export function returnedHeaders(rawHeaders: string[]): [string, string][] {
  const connection: string[] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    if (rawHeaders[i].toLowerCase() === 'connection') {
      connection.push(rawHeaders[i + 1]);
    }
  }
  const named = connectionNamed(connection.length <= 1 ? connection[0] : connection);
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const lower = rawHeaders[i].toLowerCase();
    if (!HOP_BY_HOP_HEADERS.has(lower) && !named.has(lower)) {
      pairs.push([rawHeaders[i], rawHeaders[i + 1]]);
    }
  }
  return pairs;
}

/** A Connection value naming one hop-by-hop field (the usual `keep-alive`) adds nothing to strip. */
const NOTHING_NAMED: ReadonlySet<string> = new Set<string>();

function connectionNamed(value: string | string[] | undefined): ReadonlySet<string> {
  if (value === undefined || (typeof value === 'string' && HOP_BY_HOP_HEADERS.has(value.toLowerCase()))) {
    return NOTHING_NAMED;
  }
  const named = new Set<string>();
  for (const token of [value].flat().join(',').split(',')) {
    if (token.trim() !== '') {
      named.add(token.trim().toLowerCase());
    }
  }
  return named;
}

/**
 * The query string to send on: the caller's, as written, without `bt-proxy-key` (a credential of ours).
 * Returns '' or a string starting with '?'.
 */
export function forwardedQuery(originalUrl: string): string {
  const index = originalUrl.indexOf('?');
  if (index < 0) {
    return '';
  }
  const kept = originalUrl
    .slice(index + 1)
    .split('&')
    .filter((part) => part !== '' && decodedName(part) !== PROXY_KEY_QUERY);
  return kept.length === 0 ? '' : `?${kept.join('&')}`;
}

function decodedName(part: string): string {
  const name = part.split('=')[0].replace(/\+/g, ' ');
  try {
    return decodeURIComponent(name).toLowerCase();
  } catch {
    return name.toLowerCase();
  }
}

/**
 * The path after `/proxy` as the caller wrote it (still percent-encoded), '' or starting with '/'.
 * A `.` or `..` segment, in any encoding, is refused: it would climb out of a configured proxy's base path.
 */
export function forwardedPath(originalUrl: string): string {
  const path = originalUrl.split('?')[0].replace(/^\/proxy/, '');
  for (const segment of path.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw ApiError.badRequest('The path after /proxy is not validly percent-encoded.');
    }
    if (decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\')) {
      throw ApiError.badRequest('The path after /proxy may not contain ".", ".." or encoded slashes.');
    }
  }
  return path;
}

/**
 * `<base>/<path>?<query>` (spec §4.5): the path is appended to the base path, the query to the base's own
 * query. The caller checks the result with the destination guard.
 */
export function destinationUrl(base: string, path: string, query: string): string {
  const hashless = base.split('#')[0];
  const [beforeQuery, baseQuery = ''] = splitOnce(hashless, '?');
  const joined = path === '' ? beforeQuery : `${beforeQuery.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
  const queries = [baseQuery, query.replace(/^\?/, '')].filter((q) => q !== '');
  return queries.length === 0 ? joined : `${joined}?${queries.join('&')}`;
}

function splitOnce(text: string, separator: string): [string, string?] {
  const index = text.indexOf(separator);
  return index < 0 ? [text] : [text.slice(0, index), text.slice(index + 1)];
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,256}$/;
const MAX_TRANSFORM_HEADERS = 200;

/**
 * Headers returned by transform code, made safe to send: valid names and values only (no CR, LF or NUL,
 * which would split a message), strings, numbers or booleans, without the vault's own, hop-by-hop and
 * framing headers. Anything else is dropped; a value that is not an object is a code error.
 */
export function headersFromCode(value: unknown): HeaderMap {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ApiError(500, 'The transform returned headers that are not an object.', {
      error: ['`headers` must be an object of header names and values.'],
    });
  }
  const out: HeaderMap = {};
  for (const [name, raw] of Object.entries(value).slice(0, MAX_TRANSFORM_HEADERS)) {
    const lower = name.toLowerCase();
    if (
      !HEADER_NAME.test(name) ||
      VAULT_HEADERS.has(lower) ||
      CLIENT_OWNED.has(lower) ||
      HOP_BY_HOP_HEADERS.has(lower)
    ) {
      continue;
    }
    const values = [raw]
      .flat()
      .filter((v) => ['string', 'number', 'boolean'].includes(typeof v))
      .map(String)
      .filter((v) => !/[\r\n\0]/.test(v) && v.length <= 16_384);
    if (values.length > 0) {
      out[lower] = values.length === 1 ? values[0] : values;
    }
  }
  return out;
}
