import { Keyring, KeyringError } from './keyring';
import { MasterKey } from './master-keys';

export type KeyProviderKind = 'env' | 'pkcs11';

/**
 * Where the master keys live and who applies them. Every wrapped tenant key reads
 * 'v1.<masterKeyId>.<payload>', whatever the provider, so the id alone says which provider opens it and
 * providers can be chained while tenant keys move from one to another (keys:migrate-provider).
 *
 * Design note, a cloud KMS provider (AWS KMS, GCP Cloud KMS, Vault Transit): it fits this interface as a
 * third kind whose ids name KMS key versions (an alias like `kms-prod-3` mapped in configuration to the
 * key ARN or resource name). `wrap` calls the service's Encrypt with the context as encryption context /
 * additional authenticated data and stores the service's ciphertext as the payload; `unwrap` calls
 * Decrypt; `describe` reports the key's creation time from the service's metadata. Nothing else changes:
 * tenant keys are unwrapped once and cached, so the network round trip is paid once per tenant key and
 * process, and rotation, migration and cryptoperiods work on ids as they do here. Network failures must
 * map to KeyringError('unwrap_failed') on reads and fail readiness, never be retried with the key
 * material in hand. It is not built here because no KMS can be reached from the test machines.
 */
export interface MasterKeyProvider {
  readonly kind: KeyProviderKind;
  /** Id of the master key new wraps use. */
  readonly activeKeyId: string;
  /** Ids this provider can open, active first. */
  readonly keyIds: readonly string[];
  has(id: string): boolean;
  wrap(plainKey: Buffer, context: string): Promise<string>;
  /** Throws KeyringError when the blob is malformed, tampered with or wrapped by an unknown key. */
  unwrap(wrapped: string, context: string): Promise<Buffer>;
  /** When each master key was created, if the provider knows (cryptoperiods). */
  createdAt(id: string): Date | null;
  close(): void;
}

/** Master keys from VAULT_MASTER_KEYS or the development key file, applied in this process. */
export class EnvKeyProvider implements MasterKeyProvider {
  readonly kind = 'env';
  readonly #keyring: Keyring;
  readonly keyIds: readonly string[];

  constructor(keys: MasterKey[]) {
    this.#keyring = new Keyring(keys);
    this.keyIds = keys.map((k) => k.id);
  }

  get activeKeyId(): string {
    return this.#keyring.activeKeyId;
  }

  has(id: string): boolean {
    return this.#keyring.has(id);
  }

  wrap(plainKey: Buffer, context: string): Promise<string> {
    return Promise.resolve().then(() => this.#keyring.wrap(plainKey, context));
  }

  unwrap(wrapped: string, context: string): Promise<Buffer> {
    return Promise.resolve().then(() => this.#keyring.unwrap(wrapped, context));
  }

  createdAt(): Date | null {
    return null;
  }

  close(): void {}
}

/**
 * The configured provider first (it wraps), then the other one when both are configured (it only
 * unwraps): how tenant keys move between providers while the service keeps reading them.
 */
export class ChainedKeyProvider implements MasterKeyProvider {
  constructor(private readonly providers: readonly MasterKeyProvider[]) {
    const ids = providers.flatMap((p) => p.keyIds);
    const duplicate = ids.find((id, i) => ids.indexOf(id) !== i);
    if (duplicate !== undefined) {
      throw new KeyringError(
        'invalid_master_keys',
        `master key id "${duplicate}" is used by two key providers: give every key its own id`,
      );
    }
  }

  get kind(): KeyProviderKind {
    return this.providers[0].kind;
  }

  get activeKeyId(): string {
    return this.providers[0].activeKeyId;
  }

  get keyIds(): readonly string[] {
    return this.providers.flatMap((p) => p.keyIds);
  }

  has(id: string): boolean {
    return this.providers.some((p) => p.has(id));
  }

  wrap(plainKey: Buffer, context: string): Promise<string> {
    return this.providers[0].wrap(plainKey, context);
  }

  unwrap(wrapped: string, context: string): Promise<Buffer> {
    const id = wrappedWith(wrapped);
    const owner = this.providers.find((p) => p.has(id)) ?? this.providers[0];
    return owner.unwrap(wrapped, context);
  }

  createdAt(id: string): Date | null {
    return this.providers.find((p) => p.has(id))?.createdAt(id) ?? null;
  }

  /** Which provider holds the key with this id. */
  kindOf(id: string): KeyProviderKind {
    return (this.providers.find((p) => p.has(id)) ?? this.providers[0]).kind;
  }

  /** The provider of one kind, when configured. */
  provider(kind: KeyProviderKind): MasterKeyProvider | undefined {
    return this.providers.find((p) => p.kind === kind);
  }

  close(): void {
    for (const p of this.providers) {
      p.close();
    }
  }
}

/** The master key id of a wrapped blob ('' when it is not one). */
export function wrappedWith(wrapped: string): string {
  const parts = wrapped.split('.');
  return parts.length === 3 ? parts[1] : '';
}
