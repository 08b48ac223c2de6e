/** RFC 9110 §7.6.1 connection-specific fields, plus the proxy-era and HTTP/2 ones that must not cross a hop. */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
]);

type HeaderValue = string | string[] | number | undefined;

/**
 * A copy of `headers` (names lower-cased) without hop-by-hop fields and without the fields that the
 * message's own `Connection` header names. Undefined values are dropped.
 */
export function stripHopByHop(
  headers: Record<string, HeaderValue>,
): Record<string, string | string[] | number> {
  const named = new Set<string>();
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === 'connection' && value !== undefined) {
      for (const token of [value].flat().join(',').split(',')) {
        named.add(token.trim().toLowerCase());
      }
    }
  }
  const kept: Record<string, string | string[] | number> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (value !== undefined && !HOP_BY_HOP_HEADERS.has(lower) && !named.has(lower)) {
      kept[lower] = value;
    }
  }
  return kept;
}
