import { Injectable } from '@nestjs/common';
import { createSecretKey, KeyObject } from 'node:crypto';
import { MasterKeyring } from './master-keyring.service';
import { keyContext, TenantKey, TenantKeyKind } from './tenant-key.entity';
import { TenantKeysRepository } from './tenant-keys.repository';

export interface VersionedKey {
  version: number;
  key: KeyObject;
}

/** How long a replica trusts its idea of a tenant's newest data-key version (rotation by another replica). */
const ACTIVE_VERSION_TTL_MS = 30_000;

/**
 * Hands out tenant keys, unwrapped on first use and cached in memory as KeyObjects (a raw Buffer key costs
 * Node's cipher and HMAC constructors a key import on every call). Wrapped keys live in `tenant_keys`;
 * unwrapped keys never leave this process.
 */
@Injectable()
export class TenantKeysService {
  private readonly unwrapped = new Map<string, KeyObject>();
  private readonly active = new Map<string, { version: number; until: number }>();

  constructor(
    private readonly master: MasterKeyring,
    private readonly keys: TenantKeysRepository,
  ) {}

  /** The newest data key: new ciphertexts use it. */
  async activeDataKey(tenantId: string): Promise<VersionedKey> {
    this.master.assertUnsealed();
    const cached = this.active.get(tenantId);
    let version = cached !== undefined && cached.until > Date.now() ? cached.version : undefined;
    if (version === undefined) {
      const row = await this.keys.findNewestDataKey(tenantId);
      if (row === null) {
        throw new Error('tenant has no data key');
      }
      version = row.version;
      this.active.set(tenantId, { version, until: Date.now() + ACTIVE_VERSION_TTL_MS });
      await this.remember(row);
    }
    return { version, key: await this.key(tenantId, 'data', version) };
  }

  async dataKey(tenantId: string, version: number): Promise<KeyObject> {
    return this.key(tenantId, 'data', version);
  }

  /** The HMAC key for fingerprints and blind indexes: one per tenant, never rotated with the data keys. */
  async hmacKey(tenantId: string): Promise<KeyObject> {
    return this.key(tenantId, 'hmac', 1);
  }

  /** The tenant got a new data-key version here: the next write looks the newest one up. */
  forgetActiveVersion(tenantId: string): void {
    this.active.delete(tenantId);
  }

  private async key(tenantId: string, kind: TenantKeyKind, version: number): Promise<KeyObject> {
    this.master.assertUnsealed();
    const cached = this.unwrapped.get(`${tenantId}:${kind}:${version}`);
    if (cached !== undefined) {
      return cached;
    }
    const row = await this.keys.find(tenantId, kind, version);
    if (row === null) {
      throw new Error(`tenant key ${kind} v${version} not found`);
    }
    return this.remember(row);
  }

  private async remember(row: TenantKey): Promise<KeyObject> {
    const plain = await this.master.keyring.unwrap(
      row.wrapped,
      keyContext(row.tenantId, row.kind, row.version),
    );
    const key = createSecretKey(plain);
    // The KeyObject holds its own copy: do not leave a second one on the JS heap.
    plain.fill(0);
    this.unwrapped.set(`${row.tenantId}:${row.kind}:${row.version}`, key);
    return key;
  }
}
