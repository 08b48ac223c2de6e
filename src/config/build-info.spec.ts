import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './app-config';
import { buildInfo, packageVersion } from './build-info';

describe('build info', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'build-info-'));
    // The image's layout: /app/package.json above /app/dist/src/config, with another package in between.
    mkdirSync(join(root, 'dist/src/config'), { recursive: true });
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'token-vault', version: '9.8.7' }));
    writeFileSync(join(root, 'dist/package.json'), JSON.stringify({ name: 'other', version: '1.0.0' }));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it("finds the vault's own package.json above the compiled file, skipping other packages", () => {
    expect(packageVersion(join(root, 'dist/src/config'))).toBe('9.8.7');
  });

  it('says so when there is none', () => {
    expect(() => packageVersion(tmpdir())).toThrow(/no package.json of token-vault/);
  });

  it('reports the version, the commit when set, and the Node.js', () => {
    expect(buildInfo(undefined)).toEqual({ version: packageVersion(), commit: null, node: process.version });
    expect(buildInfo('4469156').commit).toBe('4469156');
    expect(loadConfig({ VAULT_BUILD_COMMIT: 'v1.2.3-rc.1_b7' }).build.commit).toBe('v1.2.3-rc.1_b7');
  });

  it('refuses a commit that could not be a metric label', () => {
    for (const bad of ['a b', 'x"y', 'x'.repeat(65), 'a\nb']) {
      expect(() => loadConfig({ VAULT_BUILD_COMMIT: bad })).toThrow(ConfigError);
    }
    expect(() => loadConfig({ VAULT_BUILD_COMMIT: 'a"b' })).toThrow(
      /^VAULT_BUILD_COMMIT must be a commit id/,
    );
  });
});
