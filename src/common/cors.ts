import type { NextFunction, Request, Response } from 'express';
import type { CorsOrigins } from '../config/cors-config';

/**
 * Pages on another origin (hosted-Elements style forms) call the API with fetch. Keys travel in
 * BT-API-KEY, never in cookies, so no ambient credential is at stake and credentials are never allowed.
 */
export const CORS_METHODS = 'GET, POST, PUT, PATCH, DELETE';

/** What both official SDKs send besides the CORS-safelisted headers. */
export const CORS_REQUEST_HEADERS = [
  'BT-API-KEY',
  'BT-CLIENT-USER-AGENT',
  'BT-IDEMPOTENCY-KEY',
  'BT-TRACE-ID',
  'Content-Type',
  'X-Fern-Language',
  'X-Fern-Runtime',
  'X-Fern-Runtime-Version',
  'X-Fern-SDK-Name',
  'X-Fern-SDK-Version',
].join(', ');

export const CORS_EXPOSED_HEADERS = [
  'BT-TRACE-ID',
  'Idempotent-Replayed',
  'RateLimit',
  'RateLimit-Policy',
  'Retry-After',
].join(', ');

const PREFLIGHT_MAX_AGE_SECONDS = '600';

/**
 * Routes that are not the API a page calls: the invitation page (a document of its own), the proxy
 * (a destination's answer on the vault's origin), the explorer, and the operator's endpoints.
 */
const NOT_CORS = ['/invitations/accept', '/proxy', '/docs', '/docs-json', '/metrics', '/health', '/unseal'];

function servesCors(path: string): boolean {
  // Express matches routes case-insensitively: so must this.
  const lower = path.toLowerCase();
  return !NOT_CORS.some((prefix) => lower === prefix || lower.startsWith(`${prefix}/`));
}

function allowedOrigin(origins: CorsOrigins, origin: string): string | null {
  if (origins === '*') {
    return '*';
  }
  return origins.includes(origin) ? origin : null;
}

/** Answers preflights and marks API answers readable by the allowed origins. */
export function corsHeaders(origins: CorsOrigins) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const origin = req.headers.origin;
    if (origin === undefined || !servesCors(req.path)) {
      next();
      return;
    }
    if (origins !== '*') {
      res.vary('Origin');
    }
    const allowed = allowedOrigin(origins, origin);
    const preflight = req.method === 'OPTIONS' && req.headers['access-control-request-method'] !== undefined;
    if (allowed !== null) {
      res.setHeader('Access-Control-Allow-Origin', allowed);
      if (!preflight) {
        res.setHeader('Access-Control-Expose-Headers', CORS_EXPOSED_HEADERS);
      }
    }
    if (!preflight) {
      next();
      return;
    }
    if (allowed !== null) {
      res.setHeader('Access-Control-Allow-Methods', CORS_METHODS);
      res.setHeader('Access-Control-Allow-Headers', CORS_REQUEST_HEADERS);
      res.setHeader('Access-Control-Max-Age', PREFLIGHT_MAX_AGE_SECONDS);
    }
    res.status(204).end();
  };
}
