import type { Readable } from 'node:stream';
import { ApiError } from '../common/api-error';
import { MAX_NESTING } from '../common/limits';
import { nestedDeeperThan } from '../common/nesting';
import type { JsonValue } from '../sandbox/sandbox.provider';

/**
 * How /proxy treats a request body, by its Content-Type: JSON, form-urlencoded and text bodies are read
 * and detokenized (DESIGN §6); anything else (binary uploads, multipart) is streamed on untouched.
 */
export type BodyKind = 'json' | 'form' | 'text' | 'opaque';

/** Bodies the proxy reads into memory (to detokenize or transform); a larger one is 413. */
export const MAX_PROXY_BODY_BYTES = 5 * 1024 * 1024;

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json$/;

export function bodyKind(contentType: string | undefined): BodyKind {
  const type = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (JSON_TYPE.test(type)) {
    return 'json';
  }
  if (type === 'application/x-www-form-urlencoded') {
    return 'form';
  }
  // No type at all: read as text, so `{{ id }}` in a body sent without a type is still replaced.
  if (type === '' || type.startsWith('text/')) {
    return 'text';
  }
  return 'opaque';
}

/**
 * Reads a stream to its end, refusing more than `maxBytes` with `tooLarge()` as soon as it is passed. Fails
 * with the stream's error, or if it closes before its end. Plain listeners rather than an async iterator:
 * this runs twice per proxied request (its body and the destination's answer).
 */
export function readAll(stream: Readable, maxBytes: number, tooLarge: () => Error): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (err: Error | null): void => {
      if (settled) {
        return;
      }
      settled = true;
      stream.off('data', onData);
      stream.off('end', onEnd);
      stream.off('close', onClose);
      // The error listener stays (a no-op once settled): a later error must not go unhandled.
      if (err === null) {
        resolve(Buffer.concat(chunks, size));
      } else {
        reject(err);
      }
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        settle(tooLarge());
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => settle(null);
    const onError = (err: Error): void => settle(err);
    const onClose = (): void => settle(stream.errored ?? prematureClose());
    if (stream.readableEnded || stream.destroyed) {
      settle(stream.readableEnded ? null : (stream.errored ?? prematureClose()));
      return;
    }
    stream.on('error', onError);
    stream.on('end', onEnd);
    stream.on('close', onClose);
    stream.on('data', onData);
  });
}

function prematureClose(): Error {
  return Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' });
}

export function requestTooLarge(): ApiError {
  return new ApiError(
    413,
    `Request bodies the proxy reads (JSON, form and text) are limited to ${MAX_PROXY_BODY_BYTES / 1024 / 1024} MB.`,
  );
}

/** A body as transform code sees it: an object for JSON, a string otherwise (DESIGN §7). */
export function bodyForCode(raw: Buffer, kind: BodyKind): JsonValue {
  const text = raw.toString('utf8');
  if (kind === 'json' && text.trim() !== '') {
    let value: JsonValue;
    try {
      value = JSON.parse(text) as JsonValue;
    } catch {
      return text;
    }
    return shallowEnough(value);
  }
  return text;
}

/** What code returned as a body, as bytes to send: strings as they are, other values as JSON. */
export function bodyFromCode(value: unknown): Buffer | undefined {
  if (value === undefined || value === null) {
    return undefined;
  }
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value));
}

/** Parses a JSON request body that holds expressions; the error says what is wrong, never the body. */
export function parseJsonBody(text: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw ApiError.badRequest('The request body is declared as JSON but is not valid JSON.');
  }
  return shallowEnough(value);
}

/**
 * A parsed body within the nesting limit of every other route: deeper values would overflow the stack
 * of the walks and serializations that follow (a 500), so they are refused with 400.
 */
function shallowEnough<T>(value: T): T {
  if (nestedDeeperThan(value, MAX_NESTING)) {
    throw ApiError.badRequest(`The request body is nested deeper than ${MAX_NESTING} levels.`);
  }
  return value;
}
