import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Plaintext bytes per stored chunk: what an upload or a download holds of a document at a time. */
export const CHUNK_BYTES = 256 * 1024;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** A document's own data key: AES-256, sealed under the tenant's data key with the document row. */
export const DOCUMENT_KEY_BYTES = 32;

/** One chunk of plaintext, and whether it is the document's last. */
export interface PlainChunk {
  index: number;
  data: Buffer;
  final: boolean;
}

/**
 * Cuts a stream into chunks of CHUNK_BYTES (the last one shorter, possibly empty), one chunk ahead so the
 * last is known as such. Throws `tooLarge()` as soon as more than `maxBytes` arrived.
 */
export async function* fixedChunks(
  source: AsyncIterable<Buffer>,
  maxBytes: number,
  tooLarge: () => Error,
): AsyncGenerator<PlainChunk> {
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  let index = 0;
  for await (const piece of source) {
    total += piece.length;
    if (total > maxBytes) {
      throw tooLarge();
    }
    pending.push(piece);
    pendingBytes += piece.length;
    // Strictly more than a chunk: what is cut now is known not to be the last.
    while (pendingBytes > CHUNK_BYTES) {
      const joined = Buffer.concat(pending, pendingBytes);
      yield { index: index++, data: joined.subarray(0, CHUNK_BYTES), final: false };
      pending = [joined.subarray(CHUNK_BYTES)];
      pendingBytes -= CHUNK_BYTES;
    }
  }
  yield { index, data: Buffer.concat(pending, pendingBytes), final: true };
}

/**
 * The binding of a chunk: the document, its place and whether it ends the document, so chunks cannot be
 * moved to another document, reordered, or dropped from the end without failing authentication.
 */
function chunkBinding(tenantId: string, documentId: string, index: number, final: boolean): Buffer {
  return Buffer.from(`document-chunk:v1:${tenantId}:${documentId}:${index}:${final ? 'last' : 'more'}`);
}

/** AES-256-GCM of one chunk under the document key: iv, ciphertext, tag. */
export function sealChunk(key: Buffer, tenantId: string, documentId: string, chunk: PlainChunk): Buffer {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(chunkBinding(tenantId, documentId, chunk.index, chunk.final));
  return Buffer.concat([iv, cipher.update(chunk.data), cipher.final(), cipher.getAuthTag()]);
}

/** The plaintext of a sealed chunk; throws when it was altered or does not sit at this place. */
export function openChunk(
  key: Buffer,
  tenantId: string,
  documentId: string,
  index: number,
  final: boolean,
  sealed: Buffer,
): Buffer {
  if (sealed.length < IV_BYTES + TAG_BYTES) {
    throw new Error('sealed chunk too short');
  }
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(chunkBinding(tenantId, documentId, index, final));
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(sealed.subarray(IV_BYTES, sealed.length - TAG_BYTES)),
    decipher.final(),
  ]);
}
