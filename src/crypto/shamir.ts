import { combine, split } from 'shamir-secret-sharing';
import { MasterKey, parseMasterKeys } from './master-keys';

/** 'tvs1.' then base64url of one share of the VAULT_MASTER_KEYS text (its last byte: the share's x). */
const SHARE = /^tvs1\.([A-Za-z0-9_-]{20,400})$/;

/**
 * Dual control for the env provider: the whole VAULT_MASTER_KEYS text is split into Shamir shares over
 * GF(256) (library: shamir-secret-sharing, audited, no dependencies); `threshold` of them give it back,
 * fewer reveal nothing about it.
 */
export async function splitMasterKeys(
  masterKeys: string,
  shares: number,
  threshold: number,
): Promise<string[]> {
  parseMasterKeys(masterKeys);
  if (
    !Number.isInteger(shares) ||
    !Number.isInteger(threshold) ||
    threshold < 2 ||
    shares < threshold ||
    shares > 255
  ) {
    throw new RangeError('shares and threshold must be integers with 2 <= threshold <= shares <= 255');
  }
  const parts = await split(new Uint8Array(Buffer.from(masterKeys.trim(), 'utf8')), shares, threshold);
  return parts.map((p) => `tvs1.${Buffer.from(p).toString('base64url')}`);
}

export function isShare(text: string): boolean {
  return SHARE.test(text);
}

/**
 * The master keys from these shares, or null while they are too few (or from different splits): what
 * they combine to is then not a valid VAULT_MASTER_KEYS text.
 */
export async function combineShares(shares: string[]): Promise<MasterKey[] | null> {
  if (shares.length < 2) {
    return null;
  }
  const bytes = shares.map((s) => new Uint8Array(Buffer.from(SHARE.exec(s)?.[1] ?? '', 'base64url')));
  if (new Set(bytes.map((b) => b.length)).size !== 1) {
    return null;
  }
  let secret: Buffer;
  try {
    secret = Buffer.from(await combine(bytes));
  } catch {
    return null;
  }
  try {
    return parseMasterKeys(secret.toString('utf8'));
  } catch {
    return null;
  } finally {
    secret.fill(0);
  }
}
