import { Injectable } from '@nestjs/common';
import { KeyObject } from 'node:crypto';
import { open, seal, sealedKeyVersion } from './envelope';
import { TenantKeysService, VersionedKey } from './tenant-keys.service';

/**
 * Seals JSON values under the tenant's data key, bound to (kind, tenant, id) so a blob copied to another
 * row or another kind of row does not open. `kind` is the label of what is sealed: `token` for token data,
 * others for reactor and proxy configurations, webhook secrets and the like.
 */
@Injectable()
export class TenantCipher {
  constructor(private readonly keys: TenantKeysService) {}

  async sealJson(kind: string, tenantId: string, id: string, value: unknown): Promise<Buffer> {
    return sealJsonWith(await this.keys.activeDataKey(tenantId), kind, tenantId, id, value);
  }

  async openJson(kind: string, tenantId: string, id: string, blob: Buffer): Promise<unknown> {
    return openJsonWith(await this.keys.dataKey(tenantId, sealedKeyVersion(blob)), kind, tenantId, id, blob);
  }
}

/** `sealJson` with a data key already looked up. */
export function sealJsonWith(
  { version, key }: VersionedKey,
  kind: string,
  tenantId: string,
  id: string,
  value: unknown,
): Buffer {
  return seal(key, version, Buffer.from(JSON.stringify(value), 'utf8'), binding(kind, tenantId, id));
}

/** `openJson` with the blob's data key already looked up. */
export function openJsonWith(
  key: KeyObject,
  kind: string,
  tenantId: string,
  id: string,
  blob: Buffer,
): unknown {
  return JSON.parse(open(key, blob, binding(kind, tenantId, id)).toString('utf8')) as unknown;
}

function binding(kind: string, tenantId: string, id: string): string {
  return `${kind}:${tenantId}:${id}`;
}
