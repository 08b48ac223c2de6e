import type { NextFunction, Request, Response } from 'express';
import { createHash } from 'node:crypto';
import { jsonErrorPosition } from './json-error-position';
import { MAX_NESTING } from './limits';
import { problem } from './problem-details';
import { markDepthChecked, nestedDeeperThan } from './nesting';

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
/** Routes that read a multipart body themselves, as it streams (document uploads). */
const MULTIPART_ROUTES = new Set(['/documents']);
const MULTIPART_TYPE = 'multipart/form-data';
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
  const route = req.path.replace(/(.)\/+$/, '$1');
  if (
    !JSON_TYPE.test(type) &&
    !(type === FORM_TYPE && FORM_ROUTES.has(req.path)) &&
    !(type === MULTIPART_TYPE && req.method === 'POST' && MULTIPART_ROUTES.has(route))
  ) {
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

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const BACKSLASH_U = Buffer.from('\\u');
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;

/** What the raw bytes of a body told before it was parsed (set by `noteRawBody`). */
interface RawBodyNotes {
  /** The text may hold a lone surrogate: it escapes a surrogate half, or is not UTF-8. */
  mayHaveSurrogates: boolean;
  /** Too few `{` and `[` bytes to nest deeper than MAX_NESTING: the parsed body needs no depth walk. */
  shallow: boolean;
  /** SHA-256 (hex) of the raw bytes, on a request that carries an idempotency key. */
  hash?: string;
}

const RAW_BODY = Symbol('rawBody');
type NotedRequest = Request & { [RAW_BODY]?: RawBodyNotes };

/**
 * body-parser `verify`, the one look at the raw bytes: whether the text escapes a surrogate half (`\ud800`
 * to `\udfff`; a raw one in UTF-8 is invalid and decodes to U+FFFD), whether it has enough opening brackets
 * to nest past the limit, and, on a request that carries an idempotency key, the SHA-256 of the bytes (a
 * retry must send the same body byte for byte). Native Buffer searches: no copy of the body as text.
 */
export function noteRawBody(req: Request, _res: Response, buf: Buffer): void {
  // Another UTF (body-parser accepts any utf-*) spells escapes and surrogates in other bytes: walk it.
  const utf8 = charsetOf(req) === 'utf-8';
  (req as NotedRequest)[RAW_BODY] = {
    mayHaveSurrogates: !utf8 || escapesSurrogate(buf),
    shallow: utf8 && bytesAtMost(buf, [OPEN_OBJECT, OPEN_ARRAY], MAX_NESTING),
    hash:
      req.headers['bt-idempotency-key'] === undefined
        ? undefined
        : createHash('sha256').update(buf).digest('hex'),
  };
}

function charsetOf(req: Request): string {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '');
  return match === null ? 'utf-8' : match[1].toLowerCase().replace(/^utf8$/, 'utf-8');
}

/** `\u` followed by d or D and one of 8-9, a-f, A-F: the escape of a surrogate half. */
function escapesSurrogate(buf: Buffer): boolean {
  for (let at = buf.indexOf(BACKSLASH_U); at !== -1; at = buf.indexOf(BACKSLASH_U, at + 1)) {
    const d = buf[at + 2];
    const x = buf[at + 3] | 0x20; // lower case of a letter; digits keep their code
    if ((d === 0x64 || d === 0x44) && (x === 0x38 || x === 0x39 || (x >= 0x61 && x <= 0x66))) {
      return true;
    }
  }
  return false;
}

/** Whether the bytes in `codes`, counted together, occur at most `limit` times in `buf`. */
function bytesAtMost(buf: Buffer, codes: number[], limit: number): boolean {
  let count = 0;
  for (const code of codes) {
    for (let at = buf.indexOf(code); at !== -1; at = buf.indexOf(code, at + 1)) {
      count += 1;
      if (count > limit) {
        return false;
      }
    }
  }
  return true;
}

/** The SHA-256 (hex) of the parsed raw body, or of no body at all. */
export function rawBodyHash(req: Request): string {
  return (req as NotedRequest)[RAW_BODY]?.hash ?? EMPTY_SHA256;
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
 * The checks every parsed JSON (or form) body gets, before any handler, in one middleware:
 * - a lone UTF-16 surrogate ("\ud800") is valid JSON but not storable text: PostgreSQL refuses it deep inside
 *   a write (a 500 before). Its text is walked only when the raw bytes may hold one.
 * - one nesting limit: bodies no DTO describes (/detokenize) reached recursive walks and JSON.stringify of the
 *   answer, which overflow the stack a few thousand levels down (a 500). Walked only when the raw bytes have
 *   enough brackets to nest that deep; the validation pipe then trusts the result (isDepthChecked).
 */
export function checkParsedBody(req: Request, res: Response, next: NextFunction): void {
  const notes = (req as NotedRequest)[RAW_BODY];
  const body: unknown = req.body;
  if (notes === undefined || typeof body !== 'object' || body === null) {
    next();
    return;
  }
  if (notes.mayHaveSurrogates && hasLoneSurrogate(body, 0)) {
    send(
      res,
      400,
      'The request body contains an unpaired UTF-16 surrogate (such as \\ud800): text must be valid Unicode.',
    );
    return;
  }
  if (!OWN_DEPTH_ROUTES.has(req.path)) {
    if (!notes.shallow && nestedDeeperThan(body, MAX_NESTING)) {
      send(res, 400, `The request body is nested deeper than ${MAX_NESTING} levels.`);
      return;
    }
    markDepthChecked(body);
  }
  next();
}
