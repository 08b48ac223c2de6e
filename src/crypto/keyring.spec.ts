import { inspect } from 'node:util';
import { Keyring, KeyringError } from './keyring';
import { MasterKey } from './master-keys';
import { randomKey } from './secrets';

const CONTEXT = 'tenant:7d0c1b8e-1f5e-4a55-9a43-0c8f1d4b2a10:data:3';

function masterKey(id: string): MasterKey {
  return { id, key: randomKey() };
}

function errorOf(fn: () => unknown): KeyringError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(KeyringError);
    return err as KeyringError;
  }
  throw new Error('expected a KeyringError');
}

/** Flip one bit of the decoded payload at `index` and re-encode, so the blob stays well-formed. */
function flipPayloadByte(wrapped: string, index: number): string {
  const [format, id, body] = wrapped.split('.');
  const payload = Buffer.from(body, 'base64url');
  payload[index] ^= 0x01;
  return `${format}.${id}.${payload.toString('base64url')}`;
}

describe('Keyring', () => {
  const old = masterKey('old');
  const current = masterKey('new');

  it('round-trips a wrapped key', () => {
    const keyring = new Keyring([old]);
    const plain = randomKey();
    const wrapped = keyring.wrap(plain, CONTEXT);
    expect(wrapped).toMatch(/^v1\.old\.[A-Za-z0-9_-]+$/);
    expect(keyring.unwrap(wrapped, CONTEXT).equals(plain)).toBe(true);
  });

  it('uses a fresh nonce per wrap', () => {
    const keyring = new Keyring([old]);
    const plain = randomKey();
    expect(keyring.wrap(plain, CONTEXT)).not.toBe(keyring.wrap(plain, CONTEXT));
  });

  it('never leaks the plain key into the wrapped form', () => {
    const plain = randomKey();
    const wrapped = new Keyring([old]).wrap(plain, CONTEXT);
    expect(wrapped).not.toContain(plain.toString('base64url'));
  });

  it.each([
    ['nonce', 0],
    ['tag', 12],
    ['ciphertext', 28],
    ['last byte', 12 + 16 + 31],
  ])('detects tampering with the %s', (_part, index) => {
    const keyring = new Keyring([old]);
    const wrapped = keyring.wrap(randomKey(), CONTEXT);
    expect(errorOf(() => keyring.unwrap(flipPayloadByte(wrapped, index), CONTEXT)).code).toBe(
      'unwrap_failed',
    );
  });

  it('detects any edited character of the text form', () => {
    const keyring = new Keyring([old]);
    const wrapped = keyring.wrap(randomKey(), CONTEXT);
    for (let i = 'v1.old.'.length; i < wrapped.length; i++) {
      const replacement = wrapped[i] === 'A' ? 'B' : 'A';
      const edited = wrapped.slice(0, i) + replacement + wrapped.slice(i + 1);
      expect(() => keyring.unwrap(edited, CONTEXT)).toThrow(KeyringError);
    }
  });

  it('rejects a wrong context', () => {
    const keyring = new Keyring([old]);
    const wrapped = keyring.wrap(randomKey(), CONTEXT);
    expect(errorOf(() => keyring.unwrap(wrapped, CONTEXT.replace(':3', ':4'))).code).toBe('unwrap_failed');
    expect(errorOf(() => keyring.unwrap(wrapped, 'tenant:other:data:3')).code).toBe('unwrap_failed');
  });

  it('rejects malformed blobs', () => {
    const keyring = new Keyring([old]);
    const wrapped = keyring.wrap(randomKey(), CONTEXT);
    const [, , body] = wrapped.split('.');
    for (const bad of [
      '',
      'v1',
      `v2.old.${body}`,
      `v1.old.${body}.x`,
      `v1.o.ld.${body}`,
      `v1.old.${body}=`,
      'v1.old.AAAA',
    ]) {
      expect(errorOf(() => keyring.unwrap(bad, CONTEXT)).code).toBe('malformed');
    }
    expect(errorOf(() => keyring.wrappedWith('garbage')).code).toBe('malformed');
  });

  it('rejects a blob wrapped under an unknown master key', () => {
    const wrapped = new Keyring([masterKey('gone')]).wrap(randomKey(), CONTEXT);
    const error = errorOf(() => new Keyring([old, current]).unwrap(wrapped, CONTEXT));
    expect(error.code).toBe('unknown_master_key');
    expect(error.message).toContain('"gone"');
  });

  it('rejects a blob whose master key id was swapped for another known key', () => {
    const keyring = new Keyring([current, old]);
    const wrapped = keyring.wrap(randomKey(), CONTEXT);
    expect(errorOf(() => keyring.unwrap(wrapped.replace('v1.new.', 'v1.old.'), CONTEXT)).code).toBe(
      'unwrap_failed',
    );
  });

  it('rotates master keys: unwraps blobs under the old key, wraps new ones under the new key', () => {
    const before = new Keyring([old]);
    const plain = randomKey();
    const legacy = before.wrap(plain, CONTEXT);

    const after = new Keyring([current, old]);
    expect(after.activeKeyId).toBe('new');
    expect(after.wrappedWith(legacy)).toBe('old');
    expect(after.unwrap(legacy, CONTEXT).equals(plain)).toBe(true);

    const rewrapped = after.wrap(after.unwrap(legacy, CONTEXT), CONTEXT);
    expect(after.wrappedWith(rewrapped)).toBe('new');
    expect(after.unwrap(rewrapped, CONTEXT).equals(plain)).toBe(true);
    // Once re-wrapped, the old master key can be retired.
    expect(new Keyring([current]).unwrap(rewrapped, CONTEXT).equals(plain)).toBe(true);
  });

  it('validates its inputs', () => {
    expect(errorOf(() => new Keyring([])).code).toBe('invalid_master_keys');
    expect(errorOf(() => new Keyring([old, { id: 'old', key: randomKey() }])).code).toBe(
      'invalid_master_keys',
    );
    expect(errorOf(() => new Keyring([{ id: 'short', key: Buffer.alloc(16) }])).code).toBe(
      'invalid_master_keys',
    );
    expect(errorOf(() => new Keyring([{ id: 'has.dot', key: randomKey() }])).code).toBe(
      'invalid_master_keys',
    );
    const keyring = new Keyring([old]);
    expect(errorOf(() => keyring.wrap(Buffer.alloc(16), CONTEXT)).code).toBe('invalid_input');
    expect(errorOf(() => keyring.wrap(randomKey(), '')).code).toBe('invalid_input');
  });

  it('copies master keys, so later changes to the caller buffer do not matter', () => {
    const key = randomKey();
    const keyring = new Keyring([{ id: 'k', key }]);
    const plain = randomKey();
    const wrapped = keyring.wrap(plain, CONTEXT);
    key.fill(0);
    expect(keyring.unwrap(wrapped, CONTEXT).equals(plain)).toBe(true);
  });

  it('does not show master key material when inspected', () => {
    const key = randomKey();
    const shown = inspect(new Keyring([{ id: 'k', key }]), { depth: 10, showHidden: true });
    expect(shown).not.toContain('Buffer');
    expect(shown).not.toContain(key.toString('base64'));
  });
});
