import { createHmac, KeyObject } from 'node:crypto';
import { base58Fixed, isKey256, KEY_BYTES } from './secrets';

/**
 * HMAC-SHA256(hmacKey, domain + '\0' + value) as fixed-width base58 (44 chars). Used for token fingerprints
 * and blind search indexes; the domain separates uses ('fingerprint:card', 'index'). Callers normalize
 * `value` first (e.g. strip spaces from a card number), since equal hashes need byte-equal input.
 */
export function keyedHash(hmacKey: Buffer | KeyObject, domain: string, value: string): string {
  if (!isKey256(hmacKey)) {
    throw new RangeError(`keyedHash: HMAC key must be ${KEY_BYTES} bytes`);
  }
  // A NUL inside the domain would let ('a\0b', 'c') and ('a', 'b\0c') collide.
  if (domain.length === 0 || domain.includes('\0')) {
    throw new RangeError('keyedHash: domain must be non-empty and must not contain NUL');
  }
  const mac = createHmac('sha256', hmacKey).update(`${domain}\0${value}`, 'utf8').digest();
  return base58Fixed(mac);
}
