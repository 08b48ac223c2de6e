import { Injectable } from '@nestjs/common';
import { open, seal, sealedKeyVersion } from './envelope';
import { TenantKeysService } from './tenant-keys.service';

/**
 * Seals JSON values other than token data (reactor and proxy configurations) under the tenant's data key,
 * bound to (kind, tenant, id) so a blob copied to another row or another kind of row does not open.
 */
@Injectable()
export class TenantCipher {
  constructor(private readonly keys: TenantKeysService) {}

  async sealJson(kind: string, tenantId: string, id: string, value: unknown): Promise<Buffer> {
    const { version, key } = await this.keys.activeDataKey(tenantId);
    return seal(key, version, Buffer.from(JSON.stringify(value), 'utf8'), `${kind}:${tenantId}:${id}`);
  }

  async openJson(kind: string, tenantId: string, id: string, blob: Buffer): Promise<unknown> {
    const key = await this.keys.dataKey(tenantId, sealedKeyVersion(blob));
    return JSON.parse(open(key, blob, `${kind}:${tenantId}:${id}`).toString('utf8')) as unknown;
  }
}
