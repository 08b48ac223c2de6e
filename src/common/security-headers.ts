import type { NextFunction, Request, Response } from 'express';

/**
 * The vault's own answers (JSON, the accept page, /docs) share one origin with answers whose body and
 * headers a tenant or a destination chose (/proxy, CustomHttpResponseError). The rules here keep the
 * second kind inert on that origin.
 */

/** Every answer of the vault unless a page sets its own: nothing loads, nothing frames it. */
export const VAULT_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * /docs (Swagger UI): its own scripts and styles only, calls to this origin only (Try it out), no
 * frames, forms or foreign images. Swagger UI styles elements inline and draws icons as data: images.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
  "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/**
 * Answers chosen by tenant code or a destination: a sandboxed document (opaque origin: no script, no
 * storage or cookies of the vault's origin, no forms, no plugins) that may load nothing.
 */
export const UNTRUSTED_CSP = `sandbox; ${VAULT_CSP}`;

function isDocsPath(path: string): boolean {
  return path === '/docs' || path.startsWith('/docs/') || path === '/docs-json';
}

/** Sets the headers every answer carries; pages and untrusted answers replace the CSP afterwards. */
export function securityHeaders(req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  // The accept page carries its secret in the URL: no page of ours sends it on as a referrer.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Content-Security-Policy', isDocsPath(req.path) ? DOCS_CSP : VAULT_CSP);
  // Tokens, keys and detokenized data travel in answers: no browser or shared cache may keep one. /docs
  // (the explorer's static files and the OpenAPI document, nothing secret) keeps its own caching.
  if (!isDocsPath(req.path)) {
    res.setHeader('Cache-Control', 'no-store');
  }
  next();
}

/**
 * Response headers that act on the whole origin or on how the browser treats the vault, never taken
 * from a tenant or a destination: cookies, CORS, the security policies we set ourselves, storage and
 * cache clearing, service workers, HSTS, alternative services, client hints, reporting, delayed
 * redirects (Refresh). `Link`, `Location` and `WWW-Authenticate` pass: APIs use them, and the sandbox
 * CSP keeps a `Link` preload from loading anything.
 */
const ORIGIN_HEADERS = new Set([
  'set-cookie',
  'set-cookie2',
  'clear-site-data',
  'service-worker-allowed',
  'refresh',
  'permissions-policy',
  'feature-policy',
  'document-policy',
  'require-document-policy',
  'document-isolation-policy',
  'origin-agent-cluster',
  'strict-transport-security',
  'expect-ct',
  'public-key-pins',
  'public-key-pins-report-only',
  'alt-svc',
  'accept-ch',
  'accept-ch-lifetime',
  'critical-ch',
  'nel',
  'report-to',
  'reporting-endpoints',
  'x-frame-options',
  'x-content-type-options',
  'x-xss-protection',
  'x-content-security-policy',
  'x-webkit-csp',
  'referrer-policy',
  'timing-allow-origin',
  'speculation-rules',
  'supports-loading-mode',
  'set-login',
  'origin-trial',
]);
const ORIGIN_HEADER_PREFIXES = ['access-control-', 'content-security-policy', 'cross-origin-'];

export function isOriginHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return ORIGIN_HEADERS.has(lower) || ORIGIN_HEADER_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

/**
 * Sets headers a tenant or a destination chose, without those that act on the origin, and marks the
 * answer untrusted: sandboxed, never sniffed, never framed, never stored.
 */
export function setUntrustedHeaders(res: Response, headers: Iterable<[string, string | string[]]>): void {
  for (const [name, value] of headers) {
    if (!isOriginHeader(name)) {
      res.setHeader(name, value);
    }
  }
  res.setHeader('Content-Security-Policy', UNTRUSTED_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('X-Frame-Options', 'DENY');
  // A destination's or tenant code's caching header does not make an answer relayed by the vault storable.
  res.setHeader('Cache-Control', 'no-store');
}

/** A literal response chosen by tenant code (CustomHttpResponseError), sent as an untrusted answer. */
export function sendCustomResponse(
  res: Response,
  custom: { status: number; headers: Record<string, string>; body: unknown },
): void {
  res.status(custom.status);
  setUntrustedHeaders(res, Object.entries(custom.headers));
  res.json(custom.body);
}
