import { tenantDataKeys } from '../../test/support/tenant-data-keys';
import { open, seal } from '../crypto';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { sealWith, TokenCipher } from './token-cipher.service';

const TENANT = '5e0c3f1a-8b2d-4c6e-9a7f-1d3b5c7e9f02';
const TOKEN = '9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a';
const DATA = { number: '4242424242424242', cvc: '123' };

describe('TokenCipher', () => {
  const { keys, versions } = tenantDataKeys();
  const cipher = new TokenCipher(keys, new TenantCipher(keys));
  /** Token data as the vault has always sealed it: bound to `token:<tenant>:<token id>`. */
  const sealedAsBefore = (version: number): Buffer =>
    seal(
      versions.get(version)!,
      version,
      Buffer.from(JSON.stringify(DATA), 'utf8'),
      `token:${TENANT}:${TOKEN}`,
    );

  it('opens token data sealed as before, alone and in a list page', async () => {
    await expect(cipher.open(TENANT, TOKEN, sealedAsBefore(1))).resolves.toEqual(DATA);
    const blobs = [sealedAsBefore(1), sealedAsBefore(2)];
    const opener = await cipher.opener(TENANT, blobs);
    expect(blobs.map((blob) => opener(TOKEN, blob))).toEqual([DATA, DATA]);
  });

  it('seals token data that the binding `token:<tenant>:<token id>` opens', async () => {
    const sealed = await cipher.seal(TENANT, TOKEN, DATA);
    const prefetched = sealWith({ version: 1, key: versions.get(1)! }, TENANT, TOKEN, DATA);
    expect([sealed.version, prefetched.version]).toEqual([2, 1]);
    for (const { blob, version } of [sealed, prefetched]) {
      const plain = open(versions.get(version)!, blob, `token:${TENANT}:${TOKEN}`);
      expect(JSON.parse(plain.toString('utf8'))).toEqual(DATA);
    }
  });

  it('token data does not open as another kind of sealed value', async () => {
    const { blob } = await cipher.seal(TENANT, TOKEN, DATA);
    await expect(new TenantCipher(keys).openJson('webhook-secret', TENANT, TOKEN, blob)).rejects.toThrow();
  });
});
