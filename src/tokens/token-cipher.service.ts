import { Injectable } from '@nestjs/common';
import { keyedHash, open, seal, sealedKeyVersion } from '../crypto';
import { TenantKeysService } from '../crypto/tenant-keys.service';

/** Encrypts token data under the tenant's data key, bound to (tenant, token id), and computes keyed fingerprints. */
@Injectable()
export class TokenCipher {
  constructor(private readonly keys: TenantKeysService) {}

  async seal(tenantId: string, tokenId: string, data: unknown): Promise<{ blob: Buffer; version: number }> {
    const { version, key } = await this.keys.activeDataKey(tenantId);
    return {
      blob: seal(key, version, Buffer.from(JSON.stringify(data), 'utf8'), aad(tenantId, tokenId)),
      version,
    };
  }

  async open(tenantId: string, tokenId: string, blob: Buffer): Promise<unknown> {
    const key = await this.keys.dataKey(tenantId, sealedKeyVersion(blob));
    return JSON.parse(open(key, blob, aad(tenantId, tokenId)).toString('utf8')) as unknown;
  }

  async fingerprint(tenantId: string, type: string, value: string): Promise<string> {
    return keyedHash(await this.keys.hmacKey(tenantId), `fingerprint:${type}`, value);
  }

  /** The signature of a list cursor: keyed per tenant, so another tenant's cursor never verifies. */
  async cursorSignature(tenantId: string, payload: string): Promise<string> {
    return keyedHash(await this.keys.hmacKey(tenantId), 'cursor:v2', payload);
  }

  /** Blind index of a search-index value: the same for every type so `data:<value>` finds any token. */
  async blindIndex(tenantId: string, value: string): Promise<string> {
    return keyedHash(await this.keys.hmacKey(tenantId), 'index', value);
  }
}

function aad(tenantId: string, tokenId: string): string {
  return `token:${tenantId}:${tokenId}`;
}
