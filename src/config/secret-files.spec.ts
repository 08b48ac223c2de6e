import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from './app-config';
import { resolveSecretFiles, SECRET_SETTINGS } from './secret-files';

const MASTER_KEYS = 'k8s-1:' + Buffer.alloc(32, 7).toString('base64');
const METRICS_TOKEN = 'metrics-token-of-at-least-32-characters';

describe('secret settings from files (<NAME>_FILE)', () => {
  let dir: string;
  const secretFile = (name: string, contents: string): string => {
    const file = join(dir, name);
    writeFileSync(file, contents, { mode: 0o600 });
    return file;
  };
  const refusal = (env: Record<string, string>): string => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('loadConfig accepted the environment');
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tv-secret-files-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads every secret setting from its file into the configuration', () => {
    const config = loadConfig({
      VAULT_MASTER_KEYS_FILE: secretFile('master-keys', `${MASTER_KEYS}\n`),
      VAULT_BOOTSTRAP_API_KEY_FILE: secretFile('bootstrap', `key_${'A'.repeat(40)}\n`),
      DATABASE_URL_FILE: secretFile('database-url', 'postgres://vault:s3cret@db:5432/vault\n'),
      DATABASE_LISTEN_URL_FILE: secretFile('listen-url', 'postgres://vault:s3cret@db-direct:5432/vault'),
      REDIS_URL_FILE: secretFile('redis-url', 'redis://:s3cret@redis:6379\r\n'),
      SMTP_URL_FILE: secretFile('smtp-url', 'smtps://mailer:s3cret@smtp.example:465\n'),
      METRICS_TOKEN_FILE: secretFile('metrics-token', `${METRICS_TOKEN}\n`),
    });
    expect(config.masterKeys).toBe(MASTER_KEYS);
    expect(config.bootstrapApiKey).toBe(`key_${'A'.repeat(40)}`);
    expect(config.databaseUrl).toBe('postgres://vault:s3cret@db:5432/vault');
    expect(config.databaseListenUrl).toBe('postgres://vault:s3cret@db-direct:5432/vault');
    expect(config.rateLimits.redisUrl).toBe('redis://:s3cret@redis:6379');
    expect(config.smtpUrl).toBe('smtps://mailer:s3cret@smtp.example:465');
    expect(config.metricsToken).toBe(METRICS_TOKEN);
  });

  it('names exactly the settings that carry secrets', () => {
    expect([...SECRET_SETTINGS].sort()).toEqual(
      [
        'DATABASE_LISTEN_URL',
        'DATABASE_URL',
        'METRICS_TOKEN',
        'REDIS_URL',
        'SMTP_URL',
        'VAULT_BOOTSTRAP_API_KEY',
        'VAULT_MASTER_KEYS',
      ].sort(),
    );
  });

  it('strips one trailing newline, not more', () => {
    const env = resolveSecretFiles({ METRICS_TOKEN_FILE: secretFile('two-newlines', 'abc\n\n') });
    expect(env.METRICS_TOKEN).toBe('abc\n');
    expect(env.METRICS_TOKEN_FILE).toBeUndefined();
  });

  it('leaves the environment as it is when no _FILE is set', () => {
    const env = { METRICS_TOKEN: METRICS_TOKEN, PORT: '3001' };
    expect(resolveSecretFiles(env)).toEqual(env);
  });

  it('refuses a setting given both ways, naming it and not the value', () => {
    const message = refusal({
      VAULT_MASTER_KEYS: MASTER_KEYS,
      VAULT_MASTER_KEYS_FILE: secretFile('both', MASTER_KEYS),
    });
    expect(message).toBe('VAULT_MASTER_KEYS and VAULT_MASTER_KEYS_FILE are both set: keep one');
  });

  it('refuses a file that does not exist, naming the setting and the path', () => {
    const missing = join(dir, 'absent');
    expect(refusal({ DATABASE_URL_FILE: missing })).toBe(
      `DATABASE_URL_FILE: cannot read ${missing} (ENOENT)`,
    );
  });

  it('refuses an empty file and a file of one newline', () => {
    const empty = secretFile('empty', '');
    const newline = secretFile('newline', '\n');
    expect(refusal({ REDIS_URL_FILE: empty })).toBe(`REDIS_URL_FILE: ${empty} is empty`);
    expect(refusal({ SMTP_URL_FILE: newline })).toBe(`SMTP_URL_FILE: ${newline} is empty`);
  });

  it('refuses a folder and a file too large to be a secret, unread', () => {
    expect(refusal({ METRICS_TOKEN_FILE: dir })).toMatch(/^METRICS_TOKEN_FILE: .* is not a regular file/);
    const large = secretFile('large', 'x'.repeat(65 * 1024));
    expect(refusal({ METRICS_TOKEN_FILE: large })).toMatch(/^METRICS_TOKEN_FILE: .* is not a regular file/);
  });

  it('validates a value from a file like one from the environment, without echoing it', () => {
    const shortKey = 'k1:' + Buffer.alloc(20, 9).toString('base64');
    const message = refusal({ VAULT_MASTER_KEYS_FILE: secretFile('short-key', `${shortKey}\n`) });
    expect(message).toMatch(/^VAULT_MASTER_KEYS: entry 1 \(id "k1"\): the key must be 32 bytes, got 20$/);
    expect(message).not.toContain(shortKey.split(':')[1]);
    expect(refusal({ METRICS_TOKEN_FILE: secretFile('short-token', 'too-short\n') })).toBe(
      'METRICS_TOKEN must be at least 32 characters',
    );
  });
});
