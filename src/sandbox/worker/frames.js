'use strict';
/*
 * The worker's side of worker-frames.ts: u32 header length, u32 body length (big endian), header JSON,
 * body text. The host is trusted here, so frames from it are read without limits.
 */
const HEAD_BYTES = 8;

function encodeFrame(header, body) {
  const headerBytes = Buffer.from(JSON.stringify(header), 'utf8');
  const bodyBytes = Buffer.from(body === undefined ? '' : body, 'utf8');
  const head = Buffer.alloc(HEAD_BYTES);
  head.writeUInt32BE(headerBytes.length, 0);
  head.writeUInt32BE(bodyBytes.length, 4);
  return Buffer.concat([head, headerBytes, bodyBytes]);
}

/** Calls onFrame(header, bodyText) for each complete frame pushed in. */
function frameReader(onFrame) {
  let pending = Buffer.alloc(0);
  return (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    while (pending.length >= HEAD_BYTES) {
      const headerLength = pending.readUInt32BE(0);
      const end = HEAD_BYTES + headerLength + pending.readUInt32BE(4);
      if (pending.length < end) {
        return;
      }
      const header = JSON.parse(pending.toString('utf8', HEAD_BYTES, HEAD_BYTES + headerLength));
      const body = pending.toString('utf8', HEAD_BYTES + headerLength, end);
      pending = pending.subarray(end);
      onFrame(header, body);
    }
  };
}

module.exports = { encodeFrame, frameReader };
