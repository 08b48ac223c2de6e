import { Injectable } from '@nestjs/common';
import { KeyObject } from 'node:crypto';
import { keyedHash, sealedKeyVersion } from '../crypto';
import { openJsonWith, sealJsonWith, TenantCipher } from '../crypto/tenant-cipher.service';
import { TenantKeysService, VersionedKey } from '../crypto/tenant-keys.service';

/** The sealing kind of token data (TenantCipher): part of every token blob's binding. */
const TOKEN_SEAL = 'token';

/** The keys a write seals and fingerprints with: looked up once for every token of one request. */
export interface WriteKeys {
  data: VersionedKey;
  hmac: KeyObject;
}

/** Encrypts token data under the tenant's data key, bound to (tenant, token id), and computes keyed fingerprints. */
@Injectable()
export class TokenCipher {
  constructor(
    private readonly keys: TenantKeysService,
    private readonly json: TenantCipher,
  ) {}

  /** The active data key, then the HMAC key, of the tenant. */
  async writeKeys(tenantId: string): Promise<WriteKeys> {
    const data = await this.keys.activeDataKey(tenantId);
    return { data, hmac: await this.keys.hmacKey(tenantId) };
  }

  async seal(tenantId: string, tokenId: string, data: unknown): Promise<{ blob: Buffer; version: number }> {
    return sealWith(await this.keys.activeDataKey(tenantId), tenantId, tokenId, data);
  }

  async open(tenantId: string, tokenId: string, blob: Buffer): Promise<unknown> {
    return this.json.openJson(TOKEN_SEAL, tenantId, tokenId, blob);
  }

  /**
   * Opens the tenant's `blobs` (a list page's) with each key version looked up once, then each blob without a
   * lookup or a promise of its own. A key that cannot be had fails only the blobs sealed with it, when opened.
   */
  async opener(tenantId: string, blobs: Buffer[]): Promise<(tokenId: string, blob: Buffer) => unknown> {
    const versions = [...new Set(blobs.map(versionOf))].filter((v) => v !== null);
    const keys = await Promise.allSettled(versions.map((v) => this.keys.dataKey(tenantId, v)));
    const byVersion = new Map(versions.map((v, i) => [v, keys[i]]));
    return (tokenId, blob) => {
      const key = byVersion.get(sealedKeyVersion(blob));
      if (key?.status !== 'fulfilled') {
        throw key?.reason ?? new Error('data key not looked up');
      }
      return openJsonWith(key.value, TOKEN_SEAL, tenantId, tokenId, blob);
    };
  }

  async fingerprint(tenantId: string, type: string, value: string): Promise<string> {
    return fingerprintWith(await this.keys.hmacKey(tenantId), type, value);
  }

  /** The signature of a list cursor: keyed per tenant, so another tenant's cursor never verifies. */
  async cursorSignature(tenantId: string, payload: string): Promise<string> {
    return keyedHash(await this.keys.hmacKey(tenantId), 'cursor:v2', payload);
  }

  /** Blind index of a search-index value: the same for every type so `data:<value>` finds any token. */
  async blindIndex(tenantId: string, value: string): Promise<string> {
    return blindIndexWith(await this.keys.hmacKey(tenantId), value);
  }
}

export function sealWith(
  key: VersionedKey,
  tenantId: string,
  tokenId: string,
  data: unknown,
): { blob: Buffer; version: number } {
  return { blob: sealJsonWith(key, TOKEN_SEAL, tenantId, tokenId, data), version: key.version };
}

/** The key version of a blob, or null for one that is not a sealed blob (it fails when opened). */
function versionOf(blob: Buffer): number | null {
  try {
    return sealedKeyVersion(blob);
  } catch {
    return null;
  }
}

export function fingerprintWith(hmac: KeyObject, type: string, value: string): string {
  return keyedHash(hmac, `fingerprint:${type}`, value);
}

export function blindIndexWith(hmac: KeyObject, value: string): string {
  return keyedHash(hmac, 'index', value);
}
