import { createSecretKey, KeyObject } from 'node:crypto';
import { randomKey } from '../../src/crypto/secrets';
import { TenantKeysService, VersionedKey } from '../../src/crypto/tenant-keys.service';

/**
 * Data-key versions 1 and 2 of one tenant (2 active), handed out as TenantKeysService hands out unwrapped
 * keys: for the ciphers' unit specs, which need no database.
 */
export function tenantDataKeys(): { keys: TenantKeysService; versions: Map<number, KeyObject> } {
  const versions = new Map([1, 2].map((v) => [v, createSecretKey(randomKey())]));
  const keys: Pick<TenantKeysService, 'activeDataKey' | 'dataKey'> = {
    activeDataKey: (): Promise<VersionedKey> => Promise.resolve({ version: 2, key: versions.get(2)! }),
    dataKey: (_tenantId: string, version: number): Promise<KeyObject> =>
      Promise.resolve(versions.get(version)!),
  };
  return { keys: keys as TenantKeysService, versions };
}
