import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateMasterKeyLine, loadOrCreateDevMasterKey, parseMasterKeys } from './master-keys';
import { randomKey } from './secrets';

const posix = process.platform !== 'win32';

function keyText(): string {
  return randomKey().toString('base64');
}

function messageOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(Error);
    return (err as Error).message;
  }
  throw new Error('expected an error');
}

describe('parseMasterKeys', () => {
  it('parses keys in order, first one active', () => {
    const a = randomKey();
    const b = randomKey();
    const keys = parseMasterKeys(` k2026:${a.toString('base64')} , k2025_old-1:${b.toString('base64')}\n`);
    expect(keys.map((k) => k.id)).toEqual(['k2026', 'k2025_old-1']);
    expect(keys[0].key.equals(a)).toBe(true);
    expect(keys[1].key.equals(b)).toBe(true);
  });

  it('accepts unpadded base64', () => {
    const key = randomKey();
    const [parsed] = parseMasterKeys(`k:${key.toString('base64').replace(/=+$/, '')}`);
    expect(parsed.key.equals(key)).toBe(true);
  });

  it('accepts lines from generateMasterKeyLine', () => {
    expect(parseMasterKeys(generateMasterKeyLine('main'))[0].id).toBe('main');
    expect(parseMasterKeys(generateMasterKeyLine())[0].id).toMatch(/^key-[0-9a-f]{8}$/);
    expect(() => generateMasterKeyLine('bad id')).toThrow(/must match/);
  });

  const secret = keyText();
  const shortSecret = randomKey().subarray(0, 16).toString('base64');
  const longSecret = Buffer.concat([randomKey(), randomKey()]).toString('base64');
  const cases: Array<[string, string, RegExp]> = [
    ['an empty value', '', /empty/],
    ['a blank value', '   ', /empty/],
    ['an empty entry', `a:${secret},`, /entry 2 is empty/],
    ['a missing separator', secret, /entry 1 has no ':'/],
    ['an empty id', `:${secret}`, /entry 1: the id must match/],
    ['an id with a dot', `a.b:${secret}`, /the id must match/],
    ['an id over 32 chars', `${'a'.repeat(33)}:${secret}`, /the id must match/],
    ['the key in the id position', `${secret}:${keyText()}`, /entry 1: the id must match/],
    ['bad base64', `a:${secret.slice(0, 20)}!${secret.slice(21)}`, /id "a"\): the key is not valid base64/],
    [
      'base64url',
      `a:${secret.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}-`,
      /not valid base64/,
    ],
    ['an empty key', 'a:', /not valid base64/],
    ['a 16-byte key', `a:${shortSecret}`, /must be 32 bytes, got 16/],
    ['a 64-byte key', `a:${longSecret}`, /must be 32 bytes, got 64/],
    ['a duplicate id', `a:${secret},b:${keyText()},a:${keyText()}`, /entry 3: duplicate id "a"/],
  ];

  it.each(cases)('rejects %s without echoing key material', (_name, value, expected) => {
    const message = messageOf(() => parseMasterKeys(value));
    expect(message).toMatch(expected);
    for (const material of [secret, shortSecret, longSecret]) {
      expect(message).not.toContain(material);
      expect(message).not.toContain(material.slice(0, 12));
    }
  });

  it('never includes the key material of any entry in its messages', () => {
    const good = keyText();
    const message = messageOf(() => parseMasterKeys(`a:${good},b:${good.slice(0, 30)}`));
    expect(message).not.toContain(good.slice(0, 12));
  });
});

describe('loadOrCreateDevMasterKey', () => {
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'vault-master-key-'));
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a 0600 key file, then reads the same key back', () => {
    const first = loadOrCreateDevMasterKey(dir);
    expect(first.created).toBe(true);
    expect(first.keys).toHaveLength(1);
    expect(first.keys[0].id).toMatch(/^dev-[0-9a-f]{8}$/);
    expect(first.keys[0].key.length).toBe(32);

    const file = join(dir, 'master.key');
    expect(readFileSync(file, 'utf8')).toBe(`${first.keys[0].id}:${first.keys[0].key.toString('base64')}\n`);
    if (posix) {
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }

    const second = loadOrCreateDevMasterKey(dir);
    expect(second.created).toBe(false);
    expect(second.keys[0].id).toBe(first.keys[0].id);
    expect(second.keys[0].key.equals(first.keys[0].key)).toBe(true);
  });

  it('creates a missing data directory with mode 0700', () => {
    const dataDir = join(dir, 'nested', 'data');
    expect(loadOrCreateDevMasterKey(dataDir).created).toBe(true);
    if (posix) {
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    }
  });

  it('reads an existing key file', () => {
    const key = randomKey();
    writeFileSync(join(dir, 'master.key'), `mine:${key.toString('base64')}\n`, { mode: 0o600 });
    const { keys, created } = loadOrCreateDevMasterKey(dir);
    expect(created).toBe(false);
    expect(keys[0].id).toBe('mine');
    expect(keys[0].key.equals(key)).toBe(true);
  });

  it('refuses a corrupt key file instead of replacing it', () => {
    const file = join(dir, 'master.key');
    const truncated = keyText().slice(0, 30);
    writeFileSync(file, `dev-1:${truncated}\n`, { mode: 0o600 });
    const message = messageOf(() => loadOrCreateDevMasterKey(dir));
    expect(message).toMatch(/dev master key file .*master\.key is invalid/);
    expect(message).not.toContain(truncated);
    expect(readFileSync(file, 'utf8')).toBe(`dev-1:${truncated}\n`);
  });

  it('refuses a key file with more than one key', () => {
    writeFileSync(join(dir, 'master.key'), `a:${keyText()},b:${keyText()}\n`, { mode: 0o600 });
    expect(messageOf(() => loadOrCreateDevMasterKey(dir))).toMatch(/exactly one/);
  });
});
