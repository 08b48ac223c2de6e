import bs58 from 'bs58';
import { createHmac, createSecretKey, generateKeyPairSync } from 'node:crypto';
import { keyedHash } from './keyed-hash';
import { randomKey } from './secrets';

const CARD = '4242424242424242';

describe('keyedHash', () => {
  const key = randomKey();

  it('is deterministic', () => {
    expect(keyedHash(key, 'fingerprint:card', CARD)).toBe(keyedHash(key, 'fingerprint:card', CARD));
  });

  it('is HMAC-SHA256 over domain NUL value, in fixed-width base58', () => {
    const hash = keyedHash(key, 'index', CARD);
    expect(hash).toMatch(/^[1-9A-HJ-NP-Za-km-z]{44}$/);
    const mac = createHmac('sha256', key).update(`index\0${CARD}`).digest();
    expect(hash).toBe(bs58.encode(mac).padStart(44, '1'));
  });

  it('separates domains', () => {
    expect(keyedHash(key, 'fingerprint:card', CARD)).not.toBe(keyedHash(key, 'index', CARD));
    expect(keyedHash(key, 'a', 'bc')).not.toBe(keyedHash(key, 'ab', 'c'));
  });

  it('differs per key', () => {
    expect(keyedHash(key, 'index', CARD)).not.toBe(keyedHash(randomKey(), 'index', CARD));
  });

  it('differs per value', () => {
    expect(keyedHash(key, 'index', CARD)).not.toBe(keyedHash(key, 'index', '4242424242424241'));
  });

  it('gives the same hash for the key as a KeyObject', () => {
    const keyObject = createSecretKey(key);
    expect(keyedHash(keyObject, 'fingerprint:card', CARD)).toBe(keyedHash(key, 'fingerprint:card', CARD));
    expect(keyedHash(keyObject, 'index', CARD)).not.toBe(
      keyedHash(createSecretKey(randomKey()), 'index', CARD),
    );
  });

  it('rejects KeyObjects that are not 32-byte secret keys', () => {
    expect(() => keyedHash(createSecretKey(Buffer.alloc(16)), 'index', CARD)).toThrow(RangeError);
    expect(() => keyedHash(createSecretKey(Buffer.alloc(64)), 'index', CARD)).toThrow(RangeError);
    expect(() => keyedHash(generateKeyPairSync('ed25519').publicKey, 'index', CARD)).toThrow(RangeError);
  });

  it('rejects ambiguous domains and short keys', () => {
    expect(() => keyedHash(key, '', CARD)).toThrow(RangeError);
    expect(() => keyedHash(key, 'a\0b', CARD)).toThrow(RangeError);
    expect(() => keyedHash(Buffer.alloc(16), 'index', CARD)).toThrow(RangeError);
  });
});
