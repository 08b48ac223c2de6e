import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { MASTER_KEY_ID_PATTERN, MasterKey } from './master-keys';
import { KEY_BYTES } from './secrets';

const FORMAT = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export type KeyringErrorCode =
  'invalid_master_keys' | 'invalid_input' | 'malformed' | 'unknown_master_key' | 'unwrap_failed';

export class KeyringError extends Error {
  constructor(
    readonly code: KeyringErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'KeyringError';
  }
}

/**
 * Wraps/unwraps tenant keys with master keys: AES-256-GCM, random 12-byte nonce, AAD = the context string
 * (e.g. `tenant:<uuid>:data:3`), so a wrapped key moved to another tenant or purpose fails to unwrap.
 * Wrapped form: 'v1.<masterKeyId>.<base64url(nonce | tag | ciphertext)>'.
 */
export class Keyring {
  // Private fields stay out of console.log/util.inspect output.
  readonly #keys = new Map<string, Buffer>();
  readonly #activeKeyId: string;

  constructor(masterKeys: MasterKey[]) {
    if (masterKeys.length === 0) {
      throw new KeyringError('invalid_master_keys', 'keyring needs at least one master key');
    }
    for (const { id, key } of masterKeys) {
      if (!MASTER_KEY_ID_PATTERN.test(id)) {
        throw new KeyringError(
          'invalid_master_keys',
          `master key id must match ${MASTER_KEY_ID_PATTERN.source}`,
        );
      }
      if (this.#keys.has(id)) {
        throw new KeyringError('invalid_master_keys', `duplicate master key id "${id}"`);
      }
      if (key.length !== KEY_BYTES) {
        throw new KeyringError('invalid_master_keys', `master key "${id}" must be ${KEY_BYTES} bytes`);
      }
      this.#keys.set(id, Buffer.from(key));
    }
    this.#activeKeyId = masterKeys[0].id;
  }

  /** Id of the master key new blobs are wrapped with (the first one configured). */
  get activeKeyId(): string {
    return this.#activeKeyId;
  }

  wrap(plainKey: Buffer, context: string): string {
    if (plainKey.length !== KEY_BYTES) {
      throw new KeyringError('invalid_input', `only ${KEY_BYTES}-byte keys are wrapped`);
    }
    assertContext(context);
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#key(this.#activeKeyId), nonce, {
      authTagLength: TAG_BYTES,
    });
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const ciphertext = Buffer.concat([cipher.update(plainKey), cipher.final()]);
    const payload = Buffer.concat([nonce, cipher.getAuthTag(), ciphertext]);
    return `${FORMAT}.${this.#activeKeyId}.${payload.toString('base64url')}`;
  }

  /** Throws KeyringError if the master key is unknown, the blob was tampered with or the context differs. */
  unwrap(wrapped: string, context: string): Buffer {
    assertContext(context);
    const { keyId, payload } = parse(wrapped);
    const key = this.#key(keyId);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, payload.subarray(0, NONCE_BYTES), {
        authTagLength: TAG_BYTES,
      });
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(payload.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      return Buffer.concat([decipher.update(payload.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
    } catch {
      throw new KeyringError(
        'unwrap_failed',
        'wrapped key could not be unwrapped (tampered or wrong context)',
      );
    }
  }

  /** Whether a master key with this id is configured. */
  has(id: string): boolean {
    return this.#keys.has(id);
  }

  /** Master key id a wrapped blob was made with (rotation: re-wrap those not under `activeKeyId`). */
  wrappedWith(wrapped: string): string {
    return parse(wrapped).keyId;
  }

  #key(id: string): Buffer {
    const key = this.#keys.get(id);
    if (key === undefined) {
      throw new KeyringError('unknown_master_key', `unknown master key "${id}"`);
    }
    return key;
  }
}

function assertContext(context: string): void {
  if (context.length === 0) {
    throw new KeyringError('invalid_input', 'a wrap context is required');
  }
}

function parse(wrapped: string): { keyId: string; payload: Buffer } {
  const parts = wrapped.split('.');
  if (
    parts.length === 3 &&
    parts[0] === FORMAT &&
    MASTER_KEY_ID_PATTERN.test(parts[1]) &&
    BASE64URL.test(parts[2])
  ) {
    const payload = Buffer.from(parts[2], 'base64url');
    // Re-encoding rejects texts that differ only in ignored trailing bits, so every edit is detected.
    if (payload.length > NONCE_BYTES + TAG_BYTES && payload.toString('base64url') === parts[2]) {
      return { keyId: parts[1], payload };
    }
  }
  throw new KeyringError('malformed', 'wrapped key is malformed');
}
