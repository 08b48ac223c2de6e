import type { Response } from 'express';

/** A response as the caller received it: replayed byte for byte on a retry. */
export interface CapturedResponse {
  status: number;
  headers: Record<string, string | string[]>;
  /** The body, base64. */
  body: string;
}

/** Answers larger than this are not kept (the limit of a proxy body); a retry is told so. */
export const MAX_KEPT_BYTES = 5 * 1024 * 1024;

/** The header that marks a replayed answer. */
export const REPLAY_HEADER = 'Idempotent-Replayed';

/**
 * Headers that describe this delivery rather than the answer: a replay gets its own. Rate limit headers
 * describe the caller's allowance now, and the trace id belongs to the retry.
 */
const NOT_REPLAYED = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'date',
  'bt-trace-id',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  REPLAY_HEADER.toLowerCase(),
]);

/**
 * Records what is written on `res` and, before the last byte goes out, hands it to `finished` (null when
 * the body outgrew MAX_KEPT_BYTES): the record is stored before the caller can see the answer, so a retry
 * sent right after it finds the answer, not a request still running.
 */
export function captureResponse(
  res: Response,
  finished: (captured: CapturedResponse | null) => Promise<EndArguments | void>,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  const collect = (chunk: unknown, encoding: unknown): void => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function' || size > MAX_KEPT_BYTES) {
      return;
    }
    const bytes =
      typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : chunk instanceof Uint8Array
          ? Buffer.from(chunk)
          : Buffer.alloc(0);
    size += bytes.length;
    if (size <= MAX_KEPT_BYTES) {
      chunks.push(bytes);
    }
  };
  const write = res.write.bind(res) as (...args: unknown[]) => boolean;
  res.write = ((...args: unknown[]) => {
    collect(args[0], args[1]);
    return write(...args);
  }) as Response['write'];
  beforeAnswered(res, (args) => {
    collect(args[0], args[1]);
    return finished(
      size > MAX_KEPT_BYTES
        ? null
        : {
            status: res.statusCode,
            headers: keptHeaders(res),
            body: Buffer.concat(chunks).toString('base64'),
          },
    );
  });
}

/** What `res.end` was called with: `finished` may answer others to send instead (another answer). */
export type EndArguments = unknown[];

/** Runs `finished` (given the arguments of `res.end`) before the last byte of the answer goes out. */
export function beforeAnswered(
  res: Response,
  finished: (endArgs: EndArguments) => Promise<EndArguments | void>,
): void {
  const end = res.end.bind(res) as (...args: unknown[]) => Response;
  res.end = ((...args: unknown[]) => {
    res.end = end as Response['end'];
    finished(args).then(
      (instead) => void end(...(instead ?? args)),
      () => void end(...args),
    );
    return res;
  }) as Response['end'];
}

/** Sends a stored answer as it was first sent, marked as a replay. */
export function replay(res: Response, captured: CapturedResponse): void {
  res.status(captured.status);
  for (const [name, value] of Object.entries(captured.headers)) {
    res.setHeader(name, value);
  }
  res.setHeader(REPLAY_HEADER, 'true');
  res.end(Buffer.from(captured.body, 'base64'));
}

function keptHeaders(res: Response): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value !== undefined && !NOT_REPLAYED.has(name)) {
      kept[name] = typeof value === 'number' ? String(value) : value;
    }
  }
  return kept;
}
