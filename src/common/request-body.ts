import type { NextFunction, Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { jsonErrorPosition } from './json-error-position';
import { MAX_NESTING } from './limits';
import { problem } from './problem-details';
import { nestedDeeperThan } from './validation';

export const BODY_LIMIT_BYTES = 1024 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
/** `/proxy` and `/proxy/...`: bodies of any type, read raw by the forwarder itself (src/proxies). */
export function isProxyPath(path: string): boolean {
  return path === '/proxy' || path.startsWith('/proxy/');
}

/** Lets a body parser run everywhere but on /proxy, whose body must reach the forwarder unread. */
export function exceptOnProxy(
  parser: (req: Request, res: Response, next: NextFunction) => void,
): (req: Request, res: Response, next: NextFunction) => void {
  return (req, res, next) => (isProxyPath(req.path) ? next() : parser(req, res, next));
}

/** Routes that walk their whole body themselves, with depth limits they report by path (/tokenize). */
const OWN_DEPTH_ROUTES = new Set(['/tokenize']);

/** Routes an HTML form posts to (the invitation acceptance page): they also read form-encoded bodies. */
export const FORM_ROUTES = new Set(['/invitations/accept']);
const FORM_TYPE = 'application/x-www-form-urlencoded';
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function send(res: Response, status: number, detail: string): void {
  res.status(status).type('application/problem+json').json(problem(status, detail));
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * JSON routes read JSON only. Any other body (curl's default form encoding, text, no content type) is a
 * 415 naming what to send, before a parser can turn it into something a validation message would quote:
 * a form parser makes a whole JSON text, card number included, into a property name.
 */
export function jsonBodiesOnly(req: Request, res: Response, next: NextFunction): void {
  if (!BODY_METHODS.has(req.method) || !hasBody(req) || isProxyPath(req.path)) {
    next();
    return;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!JSON_TYPE.test(type) && !(type === FORM_TYPE && FORM_ROUTES.has(req.path))) {
    send(res, 415, 'Request bodies must be JSON: send Content-Type: application/json.');
    return;
  }
  next();
}

/**
 * Errors of the JSON body parser, answered here with messages that say what is wrong without quoting
 * the body: a syntax error says where the JSON broke, a large body states the limit.
 */
export function bodyParserErrors(err: unknown, req: Request, res: Response, next: NextFunction): void {
  const type = (err as { type?: unknown }).type;
  if (type === 'entity.too.large') {
    send(res, 413, `The request body is larger than the limit of ${BODY_LIMIT_BYTES / 1024 / 1024} MB.`);
    return;
  }
  if (type === 'entity.parse.failed') {
    const body = (err as { body?: unknown }).body;
    const position = typeof body === 'string' ? jsonErrorPosition(body) : null;
    send(
      res,
      400,
      `The request body is not valid JSON${position === null ? '' : whereIn(body as string, position)}.`,
    );
    return;
  }
  if (type === 'encoding.unsupported' || type === 'charset.unsupported') {
    send(res, 415, 'The request body must be UTF-8 JSON.');
    return;
  }
  next(err);
}

/** ": it breaks at line L, column C" (1-based), or at its end. */
function whereIn(text: string, position: number): string {
  if (position >= text.length) {
    return ': it ends too early';
  }
  const before = text.slice(0, position);
  const line = before.split('\n').length;
  const column = position - before.lastIndexOf('\n');
  return `: it breaks at line ${line}, column ${column}`;
}

/** An escaped surrogate half in the raw JSON text: only then is the parsed body worth walking. */
const ESCAPED_SURROGATE = /\\u[dD][89a-fA-F]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const MAY_HAVE_SURROGATES = Symbol('mayHaveSurrogates');

const RAW_BODY_HASH = Symbol('rawBodyHash');

/**
 * body-parser `verify`: notes whether the raw body escapes a surrogate half, and, on a request that carries
 * an idempotency key, the SHA-256 of the raw bytes (a retry must send the same body byte for byte).
 */
export function noteSurrogates(req: Request, _res: Response, buf: Buffer): void {
  if (ESCAPED_SURROGATE.test(buf.toString('latin1'))) {
    (req as unknown as Record<symbol, boolean>)[MAY_HAVE_SURROGATES] = true;
  }
  if (req.headers['bt-idempotency-key'] !== undefined) {
    (req as unknown as Record<symbol, string>)[RAW_BODY_HASH] = createHash('sha256')
      .update(buf)
      .digest('hex');
  }
}

/** The SHA-256 (hex) of the parsed raw body, or of no body at all. */
export function rawBodyHash(req: Request): string {
  return (req as unknown as Record<symbol, string | undefined>)[RAW_BODY_HASH] ?? EMPTY_SHA256;
}

const EMPTY_SHA256 = createHash('sha256').digest('hex');

function hasLoneSurrogate(value: unknown, depth: number): boolean {
  if (typeof value === 'string') {
    return LONE_SURROGATE.test(value);
  }
  if (depth > 200 || typeof value !== 'object' || value === null) {
    return false;
  }
  if (Array.isArray(value)) {
    return value.some((v) => hasLoneSurrogate(v, depth + 1));
  }
  return Object.entries(value).some(([k, v]) => LONE_SURROGATE.test(k) || hasLoneSurrogate(v, depth + 1));
}

/**
 * A lone UTF-16 surrogate ("\ud800") is valid JSON but not storable text: PostgreSQL refuses it deep inside
 * a write (a 500 before). Refused here, once, for every JSON route.
 */
export function refuseLoneSurrogates(req: Request, res: Response, next: NextFunction): void {
  if (
    (req as unknown as Record<symbol, boolean>)[MAY_HAVE_SURROGATES] === true &&
    hasLoneSurrogate(req.body, 0)
  ) {
    send(
      res,
      400,
      'The request body contains an unpaired UTF-16 surrogate (such as \\ud800): text must be valid Unicode.',
    );
    return;
  }
  next();
}

/**
 * One nesting limit for every JSON body, before any handler: bodies no DTO describes (/detokenize) reached
 * recursive walks and JSON.stringify of the answer, which overflow the stack a few thousand levels down (a 500).
 */
export function refuseDeepBodies(req: Request, res: Response, next: NextFunction): void {
  const body: unknown = req.body;
  if (
    typeof body === 'object' &&
    body !== null &&
    !OWN_DEPTH_ROUTES.has(req.path) &&
    nestedDeeperThan(body, MAX_NESTING)
  ) {
    send(res, 400, `The request body is nested deeper than ${MAX_NESTING} levels.`);
    return;
  }
  next();
}
