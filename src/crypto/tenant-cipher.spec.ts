import { tenantDataKeys } from '../../test/support/tenant-data-keys';
import { open, seal } from './envelope';
import { TenantCipher } from './tenant-cipher.service';

const TENANT = '0b4d7a52-3c1e-4f8a-9d26-7e5b1c9a0f34';
const ROW = 'c1a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8';
const VALUE = { url: 'https://example.test/hook', headers: { 'X-Key': 'secret' } };

describe('TenantCipher', () => {
  const { keys, versions } = tenantDataKeys();
  const cipher = new TenantCipher(keys);

  it('opens a blob sealed as before, under the binding `<kind>:<tenant>:<id>`, with any key version', async () => {
    for (const version of [1, 2]) {
      const blob = seal(
        versions.get(version)!,
        version,
        Buffer.from(JSON.stringify(VALUE), 'utf8'),
        `webhook-secret:${TENANT}:${ROW}`,
      );
      await expect(cipher.openJson('webhook-secret', TENANT, ROW, blob)).resolves.toEqual(VALUE);
    }
  });

  it('seals what the binding `<kind>:<tenant>:<id>` opens, under the active key version', async () => {
    const blob = await cipher.sealJson('reactor', TENANT, ROW, VALUE);
    const plain = open(versions.get(2)!, blob, `reactor:${TENANT}:${ROW}`);
    expect(JSON.parse(plain.toString('utf8'))).toEqual(VALUE);
  });

  it('does not open a blob under another kind, tenant or row', async () => {
    const blob = await cipher.sealJson('reactor', TENANT, ROW, VALUE);
    await expect(cipher.openJson('proxy', TENANT, ROW, blob)).rejects.toThrow();
    await expect(cipher.openJson('reactor', ROW, ROW, blob)).rejects.toThrow();
    await expect(cipher.openJson('reactor', TENANT, TENANT, blob)).rejects.toThrow();
  });
});
