import { createCipheriv, createSecretKey, generateKeyPairSync } from 'node:crypto';
import { DecryptError, open, seal, sealedKeyVersion } from './envelope';
import { randomKey } from './secrets';

const TENANT = 'b3f6f1e2-5c7a-4d1b-8e2f-2a9c0d4e6f81';
const aadFor = (tokenId: string) => `${TENANT}:${tokenId}`;
const AAD = aadFor('tok-1');
const PLAINTEXT = Buffer.from(JSON.stringify({ number: '4242424242424242', cvc: '123' }));

function expectDecryptError(fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DecryptError);
    expect((err as Error).message).toBe('ciphertext could not be decrypted');
    return;
  }
  throw new Error('expected a DecryptError');
}

describe('envelope', () => {
  const key = randomKey();

  it('round-trips plaintext', () => {
    const blob = seal(key, 3, PLAINTEXT, AAD);
    expect(open(key, blob, AAD).equals(PLAINTEXT)).toBe(true);
  });

  it('round-trips an empty plaintext', () => {
    expect(open(key, seal(key, 1, Buffer.alloc(0), AAD), AAD).length).toBe(0);
  });

  it('lays out [format][version][nonce][tag][ciphertext]', () => {
    const blob = seal(key, 0x01020304, PLAINTEXT, AAD);
    expect(blob[0]).toBe(0x01);
    expect(blob.subarray(1, 5)).toEqual(Buffer.from([1, 2, 3, 4]));
    expect(blob.length).toBe(1 + 4 + 12 + 16 + PLAINTEXT.length);
    expect(blob.includes(PLAINTEXT)).toBe(false);
  });

  it('writes what AES-256-GCM gives for its nonce, header and AAD, and opens such a blob made by hand', () => {
    const blob = seal(key, 9, PLAINTEXT, AAD);
    const header = blob.subarray(0, 5);
    const nonce = blob.subarray(5, 17);
    const cipher = createCipheriv('aes-256-gcm', key, nonce, { authTagLength: 16 });
    cipher.setAAD(Buffer.concat([header, Buffer.from(AAD, 'utf8')]));
    const ciphertext = Buffer.concat([cipher.update(PLAINTEXT), cipher.final()]);
    const byHand = Buffer.concat([header, nonce, cipher.getAuthTag(), ciphertext]);
    expect(blob.equals(byHand)).toBe(true);
    // An AAD beyond ASCII is bound as its UTF-8 bytes.
    const wide = aadFor('tök-ü');
    expect(open(key, seal(key, 1, PLAINTEXT, wide), wide).equals(PLAINTEXT)).toBe(true);
    expectDecryptError(() => open(key, seal(key, 1, PLAINTEXT, wide), aadFor('tok-u')));
  });

  it('uses a fresh nonce per call', () => {
    const a = seal(key, 1, PLAINTEXT, AAD);
    const b = seal(key, 1, PLAINTEXT, AAD);
    expect(a.subarray(5, 17).equals(b.subarray(5, 17))).toBe(false);
    expect(a.equals(b)).toBe(false);
  });

  it('never repeats a nonce, across refills of the nonce pool (512 nonces each), and keeps each sealed blob intact', () => {
    const blobs = Array.from({ length: 2000 }, () => seal(key, 1, PLAINTEXT, AAD));
    const nonces = new Set(blobs.map((blob) => blob.subarray(5, 17).toString('hex')));
    expect(nonces.size).toBe(blobs.length);
    // Every blob still opens after the pool moved on several times: no nonce byte was rewritten under it.
    for (const blob of blobs) {
      expect(open(key, blob, AAD).equals(PLAINTEXT)).toBe(true);
    }
  });

  it('reads the key version without decrypting', () => {
    expect(sealedKeyVersion(seal(key, 0, PLAINTEXT, AAD))).toBe(0);
    expect(sealedKeyVersion(seal(key, 7, PLAINTEXT, AAD))).toBe(7);
    expect(sealedKeyVersion(seal(key, 0xffffffff, PLAINTEXT, AAD))).toBe(0xffffffff);
    expectDecryptError(() => sealedKeyVersion(Buffer.alloc(10)));
  });

  it('fails when the ciphertext is copied to another token', () => {
    const blob = seal(key, 1, PLAINTEXT, aadFor('tok-1'));
    expectDecryptError(() => open(key, blob, aadFor('tok-2')));
    expectDecryptError(() => open(key, blob, `other-tenant:tok-1`));
  });

  it('fails with the wrong key', () => {
    expectDecryptError(() => open(randomKey(), seal(key, 1, PLAINTEXT, AAD), AAD));
    expectDecryptError(() => open(Buffer.alloc(16), seal(key, 1, PLAINTEXT, AAD), AAD));
  });

  it('detects tampering with any byte, including the key version', () => {
    const blob = seal(key, 1, PLAINTEXT, AAD);
    for (let i = 0; i < blob.length; i++) {
      const tampered = Buffer.from(blob);
      tampered[i] ^= 0x80;
      expectDecryptError(() => open(key, tampered, AAD));
    }
  });

  it('rejects truncated and extended blobs', () => {
    const blob = seal(key, 1, PLAINTEXT, AAD);
    for (const length of [0, 1, 5, 17, 32, 33, blob.length - 1]) {
      expectDecryptError(() => open(key, blob.subarray(0, length), AAD));
    }
    expectDecryptError(() => open(key, Buffer.concat([blob, Buffer.from([0])]), AAD));
  });

  it('rejects an unknown format byte', () => {
    const blob = seal(key, 1, PLAINTEXT, AAD);
    blob[0] = 0x02;
    expectDecryptError(() => open(key, blob, AAD));
    expectDecryptError(() => sealedKeyVersion(blob));
  });

  it('accepts the key as a KeyObject, interchangeably with its bytes', () => {
    const keyObject = createSecretKey(key);
    expect(open(keyObject, seal(keyObject, 2, PLAINTEXT, AAD), AAD).equals(PLAINTEXT)).toBe(true);
    expect(open(key, seal(keyObject, 2, PLAINTEXT, AAD), AAD).equals(PLAINTEXT)).toBe(true);
    expect(open(keyObject, seal(key, 2, PLAINTEXT, AAD), AAD).equals(PLAINTEXT)).toBe(true);
    expectDecryptError(() => open(createSecretKey(randomKey()), seal(key, 1, PLAINTEXT, AAD), AAD));
    expectDecryptError(() => open(createSecretKey(Buffer.alloc(16)), seal(key, 1, PLAINTEXT, AAD), AAD));
    expectDecryptError(() =>
      open(keyObject, seal(keyObject, 1, PLAINTEXT, aadFor('tok-1')), aadFor('tok-2')),
    );
  });

  it('rejects KeyObjects that are not 32-byte secret keys', () => {
    expect(() => seal(createSecretKey(Buffer.alloc(16)), 1, PLAINTEXT, AAD)).toThrow(RangeError);
    expect(() => seal(createSecretKey(Buffer.alloc(64)), 1, PLAINTEXT, AAD)).toThrow(RangeError);
    expect(() => seal(generateKeyPairSync('ed25519').privateKey, 1, PLAINTEXT, AAD)).toThrow(RangeError);
  });

  it('validates seal inputs', () => {
    expect(() => seal(Buffer.alloc(16), 1, PLAINTEXT, AAD)).toThrow(RangeError);
    expect(() => seal(key, -1, PLAINTEXT, AAD)).toThrow(RangeError);
    expect(() => seal(key, 1.5, PLAINTEXT, AAD)).toThrow(RangeError);
    expect(() => seal(key, 2 ** 32, PLAINTEXT, AAD)).toThrow(RangeError);
    expect(() => seal(key, 1, PLAINTEXT, '')).toThrow(RangeError);
  });
});
