import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { KEY_BYTES, randomKey } from './secrets';

export interface MasterKey {
  id: string;
  /** 32 bytes */
  key: Buffer;
}

export const MASTER_KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;
export const DEV_MASTER_KEY_FILE = 'master.key';

const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/**
 * Parse VAULT_MASTER_KEYS = 'id:base64key,id2:base64key2' (first = active).
 * Error messages name entries by position and (valid) id only: they never echo key material.
 */
export function parseMasterKeys(value: string): MasterKey[] {
  const entries = value.trim() === '' ? [] : value.split(',');
  if (entries.length === 0) {
    throw new Error('master keys: the list is empty (expected "id:base64key[,id2:base64key2...]")');
  }
  const keys: MasterKey[] = [];
  const seen = new Set<string>();
  entries.forEach((raw, index) => {
    const where = `master keys: entry ${index + 1}`;
    const entry = raw.trim();
    if (entry === '') {
      throw new Error(`${where} is empty`);
    }
    const colon = entry.indexOf(':');
    if (colon < 0) {
      throw new Error(`${where} has no ':' separator (expected "id:base64key")`);
    }
    const id = entry.slice(0, colon);
    // The id is not echoed: a misplaced key would otherwise end up in the log.
    if (!MASTER_KEY_ID_PATTERN.test(id)) {
      throw new Error(`${where}: the id must match ${MASTER_KEY_ID_PATTERN.source}`);
    }
    if (seen.has(id)) {
      throw new Error(`${where}: duplicate id "${id}"`);
    }
    const key = decodeBase64(entry.slice(colon + 1));
    if (key === null) {
      throw new Error(`${where} (id "${id}"): the key is not valid base64`);
    }
    if (key.length !== KEY_BYTES) {
      throw new Error(`${where} (id "${id}"): the key must be ${KEY_BYTES} bytes, got ${key.length}`);
    }
    seen.add(id);
    keys.push({ id, key });
  });
  return keys;
}

/** A fresh 'id:base64' line for VAULT_MASTER_KEYS (docs, CLI). */
export function generateMasterKeyLine(id: string = `key-${randomBytes(4).toString('hex')}`): string {
  if (!MASTER_KEY_ID_PATTERN.test(id)) {
    throw new Error(`master key id must match ${MASTER_KEY_ID_PATTERN.source}`);
  }
  return `${id}:${randomKey().toString('base64')}`;
}

/**
 * Dev mode: read `<dataDir>/master.key` (one line 'id:base64'), or create it with a fresh key
 * ('dev-<8 hex>', file mode 0600, dataDir created 0700 if missing). The caller warns when `created`.
 */
export function loadOrCreateDevMasterKey(dataDir: string): { keys: MasterKey[]; created: boolean } {
  const file = join(dataDir, DEV_MASTER_KEY_FILE);
  const existing = readKeyFile(file);
  if (existing !== null) {
    return { keys: existing, created: false };
  }
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const line = generateMasterKeyLine(`dev-${randomBytes(4).toString('hex')}`);
  let fd: number;
  try {
    // 'wx': never overwrite a key another process created in the meantime.
    fd = openSync(file, 'wx', 0o600);
  } catch (err) {
    const raced = isErrno(err, 'EEXIST') ? readKeyFile(file) : null;
    if (raced !== null) {
      return { keys: raced, created: false };
    }
    throw err;
  }
  try {
    writeSync(fd, `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return { keys: parseMasterKeys(line), created: true };
}

function readKeyFile(file: string): MasterKey[] | null {
  let content: string;
  try {
    content = readFileSync(file, 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT')) {
      return null;
    }
    throw err;
  }
  let keys: MasterKey[];
  try {
    keys = parseMasterKeys(content);
  } catch (err) {
    throw new Error(`dev master key file ${file} is invalid: ${(err as Error).message}`);
  }
  if (keys.length !== 1) {
    throw new Error(`dev master key file ${file} must hold exactly one "id:base64key" line`);
  }
  return keys;
}

/** Strict base64 (padding optional); null for anything Buffer.from would silently skip or truncate. */
function decodeBase64(text: string): Buffer | null {
  if (!BASE64.test(text)) {
    return null;
  }
  const bytes = Buffer.from(text, 'base64');
  const canonical = bytes.toString('base64');
  return canonical.replace(/=+$/, '') === text.replace(/=+$/, '') ? bytes : null;
}

// Duck-typed: fs errors may come from another realm (e.g. under Jest), where `instanceof Error` is false.
function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}
