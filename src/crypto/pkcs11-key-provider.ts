import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import type * as Pkcs11 from 'pkcs11js';
import { Pkcs11Config } from '../config/key-custody-config';
import { KeyringError } from './keyring';
import { MasterKeyProvider, wrappedWith } from './master-key-provider';

const FORMAT = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const BASE64URL = /^[A-Za-z0-9_-]+$/;
/** CKA_ID of the keys the vault generates: 'tv-created:YYYYMMDD'. */
const CREATED_PREFIX = 'tv-created:';

/**
 * The native binding, loaded on first use: a vault on the env provider never loads it, and an install
 * without it (an optional dependency that could not be built) still runs on the env provider.
 */
let loaded: typeof Pkcs11 | undefined;
function binding(): typeof Pkcs11 {
  if (loaded === undefined) {
    try {
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      loaded = require('pkcs11js') as typeof Pkcs11;
    } catch (err) {
      throw new KeyProviderError(bindingProblem(err));
    }
  }
  return loaded;
}

/** Why `require('pkcs11js')` failed, in words that say what to do about it. */
export function bindingProblem(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'MODULE_NOT_FOUND') {
    return (
      'PKCS#11: the pkcs11js native binding is not in this installation. npm builds it at install time ' +
      "only where python3, make, a C++ compiler and Node.js's headers are present, and skips it silently " +
      'otherwise; the container image carries it only when built with --build-arg WITH_PKCS11=true.'
    );
  }
  return (
    `PKCS#11: the pkcs11js native binding is installed but does not load (${typeof code === 'string' ? code : 'no code'}): ` +
    'it was built for another Node.js or platform; run npm rebuild pkcs11js with this Node.js.'
  );
}

/** The HSM cannot be used as configured (wrong PIN, missing token or key): the service does not start. */
export class KeyProviderError extends Error {
  override name = 'KeyProviderError';
}

/**
 * One loaded module per library path and process, shared and counted: PKCS#11 allows one C_Initialize per
 * process, and C_Finalize ends every session of it.
 */
const modules = new Map<string, { module: Pkcs11.PKCS11; users: number }>();

export function acquirePkcs11Module(library: string): Pkcs11.PKCS11 {
  const known = modules.get(library);
  if (known !== undefined) {
    known.users += 1;
    return known.module;
  }
  const { PKCS11 } = binding();
  const module = new PKCS11();
  try {
    module.load(library);
    module.C_Initialize();
  } catch (err) {
    throw new KeyProviderError(`PKCS#11: cannot load ${library} (${pkcs11Reason(err)})`);
  }
  modules.set(library, { module, users: 1 });
  return module;
}

export function releasePkcs11Module(library: string): void {
  const known = modules.get(library);
  if (known !== undefined && --known.users === 0) {
    modules.delete(library);
    known.module.C_Finalize();
    known.module.close();
  }
}

/**
 * Master keys inside an HSM, reached through PKCS#11: non-extractable AES-256 keys found by label; the
 * token wraps and unwraps tenant keys with AES-GCM (random 12-byte nonce, AAD = the key context), so
 * the master key never enters this process. Wrapped form: 'v1.<label>.<base64url(nonce | ciphertext | tag)>'.
 * Calls are synchronous: a tenant key is unwrapped once per process and then cached.
 */
export class Pkcs11KeyProvider implements MasterKeyProvider {
  readonly kind = 'pkcs11';
  readonly keyIds: readonly string[];
  readonly #module: Pkcs11.PKCS11;
  readonly #session: Buffer;
  readonly #keys = new Map<string, { handle: Buffer; createdAt: Date | null }>();
  #closed = false;

  constructor(private readonly config: Pkcs11Config) {
    this.keyIds = config.keyLabels;
    const pin = readPin(config.pinFile);
    this.#module = acquirePkcs11Module(config.library);
    try {
      this.#session = this.#openSession(pin);
      for (const label of config.keyLabels) {
        const handle = this.#find(label);
        if (handle !== null) {
          this.#keys.set(label, { handle, createdAt: this.#startDate(handle) });
        }
      }
    } catch (err) {
      releasePkcs11Module(config.library);
      throw err;
    }
  }

  get activeKeyId(): string {
    return this.keyIds[0];
  }

  /**
   * Throws KeyProviderError naming the first configured label the token does not hold: --generate creates
   * only the active (first) key; an older one missing was most likely deleted by keys:retire-master --destroy.
   */
  assertKeysPresent(): void {
    const missing = this.keyIds.find((label) => !this.#keys.has(label));
    if (missing !== undefined) {
      throw new KeyProviderError(
        `PKCS#11 token "${this.config.tokenLabel}" holds no AES key labelled "${missing}" (VAULT_PKCS11_KEY_LABELS); ` +
          (missing === this.activeKeyId
            ? 'create it with `npm run cli -- keys:rotate-master --generate`'
            : `if it was retired (keys:retire-master --destroy), remove "${missing}" from VAULT_PKCS11_KEY_LABELS and restart`),
      );
    }
  }

  /** Labels of the configured keys that can leave the token (CKA_EXTRACTABLE true, or CKA_SENSITIVE false). */
  exportableKeys(): string[] {
    return [...this.#keys].flatMap(([label, { handle }]) => {
      const [extractable, sensitive] = this.#module.C_GetAttributeValue(this.#session, handle, [
        { type: binding().CKA_EXTRACTABLE },
        { type: binding().CKA_SENSITIVE },
      ]);
      return flag(extractable.value) || !flag(sensitive.value) ? [label] : [];
    });
  }

  has(id: string): boolean {
    return this.#keys.has(id);
  }

  createdAt(id: string): Date | null {
    return this.#keys.get(id)?.createdAt ?? null;
  }

  wrap(plainKey: Buffer, context: string): Promise<string> {
    return Promise.resolve().then(() => {
      const nonce = randomBytes(NONCE_BYTES);
      this.#module.C_EncryptInit(this.#session, gcm(nonce, context), this.#handle(this.activeKeyId));
      const sealed = this.#module.C_Encrypt(
        this.#session,
        plainKey,
        Buffer.alloc(plainKey.length + TAG_BYTES),
      );
      return `${FORMAT}.${this.activeKeyId}.${Buffer.concat([nonce, sealed]).toString('base64url')}`;
    });
  }

  unwrap(wrapped: string, context: string): Promise<Buffer> {
    return Promise.resolve().then(() => {
      const payload = parse(wrapped);
      const handle = this.#handle(wrappedWith(wrapped));
      try {
        this.#module.C_DecryptInit(this.#session, gcm(payload.subarray(0, NONCE_BYTES), context), handle);
        const body = payload.subarray(NONCE_BYTES);
        return Buffer.from(this.#module.C_Decrypt(this.#session, body, Buffer.alloc(body.length)));
      } catch {
        throw new KeyringError(
          'unwrap_failed',
          'wrapped key could not be unwrapped (tampered or wrong context)',
        );
      }
    });
  }

  /**
   * Creates a non-extractable AES-256 key with this label in the token (rotation); its creation date
   * (CKA_START_DATE, and in CKA_ID as 'tv-created:YYYYMMDD') is today, for the cryptoperiod. Refuses when a key with the label exists.
   */
  generateKey(label: string, today: Date): void {
    if (this.#find(label) !== null) {
      throw new KeyProviderError(
        `PKCS#11 token "${this.config.tokenLabel}" already holds a key labelled "${label}"`,
      );
    }
    const date = Buffer.from(today.toISOString().slice(0, 10).replace(/-/g, ''), 'ascii');
    this.#module.C_GenerateKey(this.#session, { mechanism: binding().CKM_AES_KEY_GEN }, [
      { type: binding().CKA_CLASS, value: binding().CKO_SECRET_KEY },
      { type: binding().CKA_KEY_TYPE, value: binding().CKK_AES },
      { type: binding().CKA_VALUE_LEN, value: 32 },
      { type: binding().CKA_LABEL, value: label },
      { type: binding().CKA_TOKEN, value: true },
      { type: binding().CKA_PRIVATE, value: true },
      { type: binding().CKA_SENSITIVE, value: true },
      { type: binding().CKA_EXTRACTABLE, value: false },
      { type: binding().CKA_ENCRYPT, value: true },
      { type: binding().CKA_DECRYPT, value: true },
      { type: binding().CKA_START_DATE, value: date },
      // Read back for the cryptoperiod: pkcs11js cannot read CKA_START_DATE (CKR_GENERAL_ERROR).
      { type: binding().CKA_ID, value: Buffer.concat([Buffer.from(CREATED_PREFIX, 'ascii'), date]) },
    ]);
    const handle = this.#find(label);
    if (handle !== null && this.keyIds.includes(label)) {
      this.#keys.set(label, { handle, createdAt: this.#startDate(handle) });
    }
  }

  /** Deletes the key with this label from the token (retirement, once no tenant key uses it). */
  destroyKey(label: string): boolean {
    const handle = this.#find(label);
    if (handle === null) {
      return false;
    }
    this.#module.C_DestroyObject(this.#session, handle);
    this.#keys.delete(label);
    return true;
  }

  close(): void {
    if (this.#closed) {
      return;
    }
    this.#closed = true;
    try {
      this.#module.C_CloseSession(this.#session);
    } finally {
      releasePkcs11Module(this.config.library);
    }
  }

  #openSession(pin: string): Buffer {
    const slot = this.#module
      .C_GetSlotList(true)
      .find((s: Buffer) => this.#module.C_GetTokenInfo(s).label.trim() === this.config.tokenLabel);
    if (slot === undefined) {
      throw new KeyProviderError(
        `PKCS#11: no token labelled "${this.config.tokenLabel}" in ${this.config.library} (VAULT_PKCS11_TOKEN_LABEL)`,
      );
    }
    const session = this.#module.C_OpenSession(slot, binding().CKF_SERIAL_SESSION | binding().CKF_RW_SESSION);
    try {
      this.#module.C_Login(session, binding().CKU_USER, pin);
    } catch (err) {
      const code = err instanceof binding().Pkcs11Error ? (err as { code: number }).code : null;
      if (code !== binding().CKR_USER_ALREADY_LOGGED_IN) {
        this.#module.C_CloseSession(session);
        throw new KeyProviderError(
          `PKCS#11: login to token "${this.config.tokenLabel}" failed (${pkcs11Reason(err)}): check VAULT_PKCS11_PIN_FILE`,
        );
      }
    }
    return session;
  }

  #find(label: string): Buffer | null {
    this.#module.C_FindObjectsInit(this.#session, [
      { type: binding().CKA_CLASS, value: binding().CKO_SECRET_KEY },
      { type: binding().CKA_KEY_TYPE, value: binding().CKK_AES },
      { type: binding().CKA_LABEL, value: label },
    ]);
    try {
      return this.#module.C_FindObjects(this.#session);
    } finally {
      this.#module.C_FindObjectsFinal(this.#session);
    }
  }

  #startDate(handle: Buffer): Date | null {
    try {
      const [attr] = this.#module.C_GetAttributeValue(this.#session, handle, [{ type: binding().CKA_ID }]);
      const text = Buffer.isBuffer(attr.value) ? attr.value.toString('ascii') : '';
      const match = /^tv-created:(\d{4})(\d{2})(\d{2})$/.exec(text);
      return match === null
        ? null
        : new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
    } catch {
      return null;
    }
  }

  #handle(id: string): Buffer {
    const key = this.#keys.get(id);
    if (key === undefined) {
      throw new KeyringError('unknown_master_key', `unknown master key "${id}"`);
    }
    return key.handle;
  }
}

function gcm(nonce: Buffer, context: string): Pkcs11.Mechanism {
  if (context.length === 0) {
    throw new KeyringError('invalid_input', 'a wrap context is required');
  }
  const parameter: Pkcs11.AesGCM = {
    type: binding().CK_PARAMS_AES_GCM,
    iv: nonce,
    ivBits: NONCE_BYTES * 8,
    aad: Buffer.from(context, 'utf8'),
    tagBits: TAG_BYTES * 8,
  };
  return { mechanism: binding().CKM_AES_GCM, parameter };
}

/** A CK_BBOOL attribute as read back (one byte; missing reads as false). */
function flag(value: unknown): boolean {
  return Buffer.isBuffer(value) ? value.length > 0 && value[0] !== 0 : value === true;
}

function parse(wrapped: string): Buffer {
  const parts = wrapped.split('.');
  if (parts.length === 3 && parts[0] === FORMAT && BASE64URL.test(parts[2])) {
    const payload = Buffer.from(parts[2], 'base64url');
    if (payload.length > NONCE_BYTES + TAG_BYTES && payload.toString('base64url') === parts[2]) {
      return payload;
    }
  }
  throw new KeyringError('malformed', 'wrapped key is malformed');
}

/** The PIN file's first line; its content is never part of an error, nor its name unless it looks like a path. */
function readPin(file: string): string {
  let pin: string;
  try {
    pin = readFileSync(file, 'utf8').split('\n')[0].trim();
  } catch (err) {
    throw new KeyProviderError(
      `PKCS#11: cannot read the PIN file ${pinFileName(file)} (${(err as NodeJS.ErrnoException).code ?? 'error'})` +
        (looksLikePath(file)
          ? ''
          : ': VAULT_PKCS11_PIN_FILE must be the path of a file holding the PIN, not the PIN'),
    );
  }
  if (pin === '') {
    throw new KeyProviderError(`PKCS#11: the PIN file ${pinFileName(file)} is empty`);
  }
  return pin;
}

/** A value pasted by mistake may be the PIN itself: only one that looks like a path is repeated. */
function pinFileName(file: string): string {
  return looksLikePath(file) ? `${file} (VAULT_PKCS11_PIN_FILE)` : 'named by VAULT_PKCS11_PIN_FILE';
}

function looksLikePath(file: string): boolean {
  return /^(\/|\.{1,2}\/|~\/)[^\s]*$/.test(file);
}

/** The PKCS#11 return code's name (CKR_PIN_INCORRECT), never data. */
function pkcs11Reason(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  return /CKR_[A-Z_]+/.exec(message)?.[0] ?? (err instanceof Error ? err.name : 'error');
}
