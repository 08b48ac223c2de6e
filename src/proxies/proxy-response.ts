import type { Response } from 'express';
import { pipeline } from 'node:stream/promises';
import { setUntrustedHeaders } from '../common/security-headers';
import { OutboundError, OutboundResponse } from '../outbound';
import type { TransformState } from './builtin-transforms';
import { readAll } from './proxy-body';
import { DESTINATION_STATUS_HEADER, HeaderMap, returnedHeaders, TRACE_HEADER } from './proxy-request';

/** Destination responses read into memory for a response transform. */
const MAX_TRANSFORMED_RESPONSE_BYTES = 5 * 1024 * 1024;

/**
 * Answers of at most this size, by their Content-Length, are read whole and sent in one write: a
 * stream pipeline costs more than the copy for a small answer, and writes head and body apart.
 */
const WHOLE_ANSWER_BYTES = 64 * 1024;

/**
 * Streams the destination's answer back (status, headers in their raw names, body bytes), as an
 * untrusted answer: sandboxed, without the headers that act on the vault's origin (security-headers.ts).
 */
export async function relay(res: Response, response: OutboundResponse): Promise<void> {
  const grouped = new Map<string, { name: string; values: string[] }>();
  for (const [name, value] of returnedHeaders(response.rawHeaders)) {
    const lower = name.toLowerCase();
    const entry = grouped.get(lower) ?? { name, values: [] };
    entry.values.push(value);
    grouped.set(lower, entry);
  }
  grouped.delete(TRACE_HEADER);
  setUntrustedHeaders(
    res,
    [...grouped.values()].map(({ name, values }) => [name, values.length === 1 ? values[0] : values]),
  );
  res.setHeader(DESTINATION_STATUS_HEADER, String(response.status));
  res.statusCode = response.status;
  if (response.statusText !== '') {
    res.statusMessage = response.statusText;
  }
  try {
    if (smallDeclaredLength(response)) {
      res.end(await readAll(response.body, WHOLE_ANSWER_BYTES, answerTooLarge));
    } else {
      await pipeline(response.body, res);
    }
  } catch {
    // The head is sent (a small answer's goes with its body, and nothing is sent when reading it fails):
    // a failure now can only cut the answer short, which the caller sees as an error.
    res.destroy();
  }
}

function answerTooLarge(): OutboundError {
  return new OutboundError('response_too_large', 'The destination sent more than it declared.');
}

function smallDeclaredLength(response: OutboundResponse): boolean {
  const declared = response.headers['content-length'];
  return (
    response.headers['transfer-encoding'] === undefined &&
    typeof declared === 'string' &&
    /^\d{1,5}$/.test(declared) &&
    Number(declared) <= WHOLE_ANSWER_BYTES
  );
}

/**
 * Answers with the destination's 2xx response after the response transforms (DESIGN §7): the body read
 * (uncompressed, at most 5 MB), given to the transforms in order (code gets `{ body, headers, status }`),
 * what the last one left sent.
 */
export async function sendTransformed(
  res: Response,
  response: OutboundResponse,
  transform: (state: TransformState) => Promise<TransformState>,
): Promise<void> {
  const raw = await readAll(
    response.body,
    MAX_TRANSFORMED_RESPONSE_BYTES,
    () => new OutboundError('response_too_large', 'The destination response is too large to transform.'),
  );
  const headers: HeaderMap = {};
  for (const [name, value] of returnedHeaders(response.rawHeaders)) {
    const lower = name.toLowerCase();
    headers[lower] = headers[lower] === undefined ? value : [headers[lower], value].flat();
  }
  const { headers: outHeaders, body } = await transform({ headers, body: raw });
  delete outHeaders['content-length'];
  delete outHeaders['content-encoding'];
  res.status(response.status);
  setUntrustedHeaders(res, Object.entries(outHeaders));
  res.setHeader(DESTINATION_STATUS_HEADER, String(response.status));
  res.end(body);
}
