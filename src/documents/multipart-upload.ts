import busboy from 'busboy';
import type { IncomingMessage } from 'node:http';
import type { Readable } from 'node:stream';
import { ApiError } from '../common/api-error';

/** The multipart part names of an upload (the SDK's DocumentsUploadRequest). */
export const FILE_PART = 'document';
export const REQUEST_PART = 'request';
const MAX_REQUEST_PART_BYTES = 64 * 1024;

export interface UploadParts<F> {
  /** The `request` part's text (JSON), when sent. */
  request: string | undefined;
  /** What `onFile` made of the `document` part, when sent. */
  file: F | undefined;
}

/** The client went away before its upload ended. */
export class UploadCutOff extends ApiError {
  constructor() {
    super(400, 'The upload ended before its multipart body did.');
  }
}

/** A document over the limit. The connection closes after the answer: the rest of the body is not read. */
export function tooLarge(max: number): ApiError {
  return new ApiError(413, `The document is larger than the limit of ${max} bytes.`, undefined, {
    Connection: 'close',
  });
}

/**
 * Reads an upload's multipart body as it arrives: the `document` file part is handed to `onFile` as a stream
 * (read at the pace `onFile` reads it, so the body is never held whole), the `request` part is kept as text.
 * Anything else (another part, a second file, a malformed or cut-off body) rejects, and the file stream is
 * destroyed so `onFile` stops.
 */
export function readUpload<F>(
  req: IncomingMessage,
  maxFileBytes: number,
  onFile: (stream: Readable, mimeType: string) => Promise<F>,
): Promise<UploadParts<F>> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: req.headers,
        limits: {
          files: 1,
          fields: 1,
          headerPairs: 20,
          fieldSize: MAX_REQUEST_PART_BYTES,
          fileSize: maxFileBytes + 1, // busboy signals the limit on reaching it
        },
      });
    } catch {
      reject(new ApiError(400, 'The body must be multipart/form-data with a boundary.'));
      return;
    }
    let request: string | undefined;
    let file: Promise<F> | undefined;
    let fileStream: Readable | undefined;
    let settled = false;
    const fail = (err: unknown): void => {
      if (settled) {
        return;
      }
      settled = true;
      req.unpipe(parser);
      fileStream?.destroy(err instanceof Error ? err : new Error(String(err)));
      reject(err instanceof Error ? err : new Error(String(err)));
    };
    const refuse = (path: string, message: string): void => fail(ApiError.field(path, message));
    parser.on('file', (name, stream, info) => {
      if (name !== FILE_PART || file !== undefined) {
        stream.resume();
        refuse(name, `unexpected file part: send one file part named ${FILE_PART}`);
        return;
      }
      fileStream = stream;
      // Past its size limit busboy reads on and drops the rest of the part: refuse before it does, so
      // the request stops being read while the answer goes out.
      stream.once('limit', () => fail(tooLarge(maxFileBytes)));
      file = onFile(stream, info.mimeType);
      file.catch(fail);
    });
    parser.on('field', (name, value, info) => {
      if (name !== REQUEST_PART) {
        refuse(name, name === FILE_PART ? 'must be a file part (with a filename)' : 'unexpected part');
      } else if (info.valueTruncated) {
        refuse(REQUEST_PART, `must be at most ${MAX_REQUEST_PART_BYTES / 1024} KB`);
      } else {
        request = value;
      }
    });
    parser.on('filesLimit', () => refuse(FILE_PART, 'only one file part may be sent'));
    parser.on('fieldsLimit', () => refuse(REQUEST_PART, 'only one request part may be sent'));
    parser.on('error', () => fail(ApiError.badRequest('The multipart body is malformed or incomplete.')));
    parser.on('close', () => {
      if (settled) {
        return;
      }
      (file ?? Promise.resolve(undefined)).then((stored) => {
        settled = true;
        resolve({ request, file: stored });
      }, fail);
    });
    req.on('close', () => {
      if (!req.complete) {
        fail(new UploadCutOff());
      }
    });
    req.pipe(parser);
  });
}
