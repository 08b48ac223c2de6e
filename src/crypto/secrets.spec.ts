import bs58 from 'bs58';
import { createHash, randomBytes } from 'node:crypto';
import {
  base58Fixed,
  generateApiKey,
  generateProxyKey,
  hashSecret,
  randomKey,
  safeEqualHex,
} from './secrets';

const BASE58 = '[1-9A-HJ-NP-Za-km-z]';

describe('secrets: keys, API keys, hashes and comparison', () => {
  it('randomKey returns 32 fresh bytes', () => {
    const a = randomKey();
    expect(a.length).toBe(32);
    expect(a.equals(randomKey())).toBe(false);
  });

  it('generateApiKey is key_ + 44 base58 chars (256 bits) and never repeats', () => {
    const keys = new Set(Array.from({ length: 500 }, () => generateApiKey()));
    expect(keys.size).toBe(500);
    for (const key of keys) {
      expect(key).toMatch(new RegExp(`^key_${BASE58}{44}$`));
    }
  });

  it('generateApiKey carries the full 32 random bytes', () => {
    // Across many keys every byte position takes many values: no constant bytes hide in the encoding.
    const seen = Array.from({ length: 32 }, () => new Set<number>());
    for (let i = 0; i < 200; i++) {
      const bytes = Buffer.from(bs58.decode(generateApiKey().slice('key_'.length))).subarray(-32);
      bytes.forEach((b, index) => seen[index].add(b));
    }
    for (const values of seen) {
      expect(values.size).toBeGreaterThan(50);
    }
  });

  it('generateProxyKey is 33 base58 chars (192 bits)', () => {
    const keys = new Set(Array.from({ length: 200 }, () => generateProxyKey()));
    expect(keys.size).toBe(200);
    for (const key of keys) {
      expect(key).toMatch(new RegExp(`^${BASE58}{33}$`));
    }
  });

  it('base58Fixed keeps a constant width even for small numbers', () => {
    expect(base58Fixed(Buffer.alloc(32))).toBe('1'.repeat(44));
    expect(base58Fixed(Buffer.alloc(32, 0xff))).toHaveLength(44);
    const small = Buffer.alloc(32);
    small[31] = 1;
    expect(base58Fixed(small)).toBe(`${'1'.repeat(43)}2`);
    expect(base58Fixed(Buffer.alloc(24, 0xff))).toHaveLength(33);
  });

  it('base58Fixed is the general base58 encoding padded to width, for every length and leading zeros', () => {
    const reference = (bytes: Buffer): string =>
      bs58.encode(bytes).padStart(Math.ceil((bytes.length * 8) / Math.log2(58)), '1');
    for (let n = 0; n < 3000; n++) {
      const bytes = randomBytes(1 + (n % 40));
      if (n % 3 === 0) {
        bytes.fill(0, 0, Math.min(n % 6, bytes.length));
      }
      if (n % 10 === 0) {
        bytes.fill(0xff, Math.min(n % 4, bytes.length));
      }
      expect(base58Fixed(bytes)).toBe(reference(bytes));
    }
    expect(base58Fixed(Buffer.alloc(0))).toBe('');
  });

  it('hashSecret is SHA-256 hex', () => {
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashSecret('key_x')).toBe(createHash('sha256').update('key_x').digest('hex'));
  });

  it('safeEqualHex compares hex strings', () => {
    const a = hashSecret('one');
    expect(safeEqualHex(a, hashSecret('one'))).toBe(true);
    expect(safeEqualHex(a, a.toUpperCase())).toBe(true);
    expect(safeEqualHex(a, hashSecret('two'))).toBe(false);
    expect(safeEqualHex(a, a.slice(0, 62))).toBe(false);
    expect(safeEqualHex(a, `${a}00`)).toBe(false);
    expect(safeEqualHex('', '')).toBe(false);
    expect(safeEqualHex('zz', 'zz')).toBe(false);
    expect(safeEqualHex('abc', 'abc')).toBe(false);
  });
});
