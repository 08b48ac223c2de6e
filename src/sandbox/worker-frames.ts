/**
 * How messages cross between the host and a sandbox worker: length-prefixed frames on a pipe, not Node's
 * IPC channel, which would parse every message (however large) on the main thread before anyone could
 * look at its size. A frame is: header length and body length (u32, big endian), the header (JSON) and the
 * body (UTF-8 text: a run's result or a host call's arguments). The host reads both lengths first and
 * refuses a frame over its limits before buffering or parsing any of it.
 */
const HEAD_BYTES = 8;

export function encodeFrame(header: object, body = ''): Buffer {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const bodyBytes = Buffer.from(body, 'utf8');
  const head = Buffer.alloc(HEAD_BYTES);
  head.writeUInt32BE(headerBytes.length, 0);
  head.writeUInt32BE(bodyBytes.length, 4);
  return Buffer.concat([head, headerBytes, bodyBytes]);
}

export interface FrameLimits {
  headerBytes: number;
  bodyBytes: number;
}

/** Reassembles frames from a worker's pipe; a frame over the limits or unreadable ends the stream. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  private broken = false;

  constructor(
    private readonly limits: FrameLimits,
    private readonly onFrame: (header: unknown, body: Buffer) => void,
    private readonly onViolation: () => void,
  ) {}

  push(chunk: Buffer): void {
    if (this.broken) {
      return;
    }
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= HEAD_BYTES) {
      const head = this.take(HEAD_BYTES, false);
      const headerLength = head.readUInt32BE(0);
      const bodyLength = head.readUInt32BE(4);
      if (headerLength > this.limits.headerBytes || bodyLength > this.limits.bodyBytes) {
        this.fail();
        return;
      }
      if (this.buffered < HEAD_BYTES + headerLength + bodyLength) {
        return;
      }
      const frame = this.take(HEAD_BYTES + headerLength + bodyLength, true);
      let header: unknown;
      try {
        header = JSON.parse(frame.toString('utf8', HEAD_BYTES, HEAD_BYTES + headerLength));
      } catch {
        this.fail();
        return;
      }
      this.onFrame(header, frame.subarray(HEAD_BYTES + headerLength));
    }
  }

  private fail(): void {
    this.broken = true;
    this.chunks = [];
    this.buffered = 0;
    this.onViolation();
  }

  /** The first `length` buffered bytes, consumed or only looked at. */
  private take(length: number, consume: boolean): Buffer {
    if (this.chunks[0].length < length) {
      this.chunks = [Buffer.concat(this.chunks, this.buffered)];
    }
    const first = this.chunks[0];
    const out = first.subarray(0, length);
    if (consume) {
      this.buffered -= length;
      if (first.length === length) {
        this.chunks.shift();
      } else {
        this.chunks[0] = first.subarray(length);
      }
    }
    return out;
  }
}
