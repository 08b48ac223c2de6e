import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadDatabaseTlsConfig } from './database-tls-config';

const URLS = [{ name: 'DATABASE_URL', url: 'postgres://u@db.example:5432/vault' }];

describe('loadDatabaseTlsConfig', () => {
  it('is plain TCP unless set', () => {
    expect(loadDatabaseTlsConfig({}, URLS)).toEqual({ mode: 'disable', ca: null, caFile: null });
  });

  it('refuses an unknown mode, a CA file without verify-full, and TLS for the embedded database', () => {
    expect(() => loadDatabaseTlsConfig({ DATABASE_SSL_MODE: 'prefer' }, URLS)).toThrow(
      'DATABASE_SSL_MODE must be one of disable, require, verify-full',
    );
    expect(() =>
      loadDatabaseTlsConfig({ DATABASE_SSL_MODE: 'require', DATABASE_SSL_CA_FILE: '/x.pem' }, URLS),
    ).toThrow('DATABASE_SSL_CA_FILE is used with DATABASE_SSL_MODE=verify-full only');
    expect(() =>
      loadDatabaseTlsConfig({ DATABASE_SSL_MODE: 'require' }, [{ name: 'DATABASE_URL', url: null }]),
    ).toThrow('the embedded database has no network connection');
  });

  it('refuses TLS settings in the URL, where pg would read them unlike libpq', () => {
    const urls = [{ name: 'DATABASE_LISTEN_URL', url: 'postgres://u@h/db?sslmode=require' }];
    expect(() => loadDatabaseTlsConfig({}, urls)).toThrow('DATABASE_LISTEN_URL carries ?sslmode=');
  });

  it('reads the CA file at boot and refuses one that is missing or holds no certificate', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tv-ca-'));
    writeFileSync(join(dir, 'empty.pem'), 'nothing here');
    const env = (file: string) => ({ DATABASE_SSL_MODE: 'verify-full', DATABASE_SSL_CA_FILE: file });
    expect(() => loadDatabaseTlsConfig(env(join(dir, 'none.pem')), URLS)).toThrow('cannot be read (ENOENT)');
    expect(() => loadDatabaseTlsConfig(env(join(dir, 'empty.pem')), URLS)).toThrow(
      'holds no PEM certificate',
    );
  });
});
