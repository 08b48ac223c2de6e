import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KeyProviderError, Pkcs11KeyProvider } from './pkcs11-key-provider';

/** The PIN file is read before the module loads: no token is needed to see what a bad setting prints. */
const open = (pinFile: string): unknown => {
  try {
    new Pkcs11KeyProvider({
      library: '/nonexistent/libsofthsm2.so',
      tokenLabel: 'vault',
      pinFile,
      keyLabels: ['hsm-1'],
    }).close();
    return null;
  } catch (err) {
    return err;
  }
};

describe('a PKCS#11 PIN file that cannot be used', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tv-pin-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('never repeats a value that does not look like a path: it may be the PIN itself', () => {
    for (const value of ['1357-2468', 'pin 1357', 's3cr3t-PIN/x']) {
      const err = open(value);
      expect(err).toBeInstanceOf(KeyProviderError);
      expect((err as Error).message).toMatch(
        /^PKCS#11: cannot read the PIN file named by VAULT_PKCS11_PIN_FILE/,
      );
      expect((err as Error).message).toMatch(/must be the path of a file holding the PIN/);
      expect((err as Error).message).not.toContain(value);
    }
  });

  it('names a path it could not read, or that is empty', () => {
    const missing = join(dir, 'missing-pin');
    expect((open(missing) as Error).message).toBe(
      `PKCS#11: cannot read the PIN file ${missing} (VAULT_PKCS11_PIN_FILE) (ENOENT)`,
    );
    const empty = join(dir, 'empty-pin');
    writeFileSync(empty, '\n');
    expect((open(empty) as Error).message).toBe(
      `PKCS#11: the PIN file ${empty} (VAULT_PKCS11_PIN_FILE) is empty`,
    );
  });
});
