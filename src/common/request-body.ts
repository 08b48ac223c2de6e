import type { NextFunction, Request, Response } from 'express';
import { jsonErrorPosition } from './json-error-position';
import { problem } from './problem-details';

export const BODY_LIMIT_BYTES = 1024 * 1024;
const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;
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
  if (!BODY_METHODS.has(req.method) || !hasBody(req)) {
    next();
    return;
  }
  const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
  if (!JSON_TYPE.test(type)) {
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
    send(res, 400, `The request body is not valid JSON${position === null ? '' : whereIn(body as string, position)}.`);
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
