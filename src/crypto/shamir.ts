import { combine, split } from 'shamir-secret-sharing';
import { createHash, randomBytes } from 'node:crypto';
import { MasterKey, parseMasterKeys } from './master-keys';

/** Before splits were recorded: 'tvs1.' then base64url of one share (its last byte: the share's x). */
const SHARE_V1 = /^tvs1\.([A-Za-z0-9_-]{20,400})$/;
/** 'tvs2.<split id>.<index>.<threshold>.<base64url share bytes>': what keys:split prints and records. */
const SHARE_V2 = /^tvs2\.([A-Za-z0-9_-]{16})\.([1-9]\d{0,2})\.([1-9]\d{0,2})\.([A-Za-z0-9_-]{20,1400})$/;

/** One share as its text says it is; nothing is checked against a split yet (see UnsealSplits). */
export interface ParsedShare {
  text: string;
  splitId: string;
  /** 1..n, in the order keys:split printed them. */
  index: number;
  threshold: number;
}

/**
 * Dual control for the env provider: the whole VAULT_MASTER_KEYS text is split into Shamir shares over
 * GF(256) (library: shamir-secret-sharing, audited, no dependencies); `threshold` of them give it back,
 * fewer reveal nothing about it. Every share names its split (a random id), its index and the threshold;
 * the vault checks each against the SHA-256 digests recorded when splitting (shareDigest).
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
  const splitId = randomBytes(12).toString('base64url');
  const parts = await split(new Uint8Array(Buffer.from(masterKeys.trim(), 'utf8')), shares, threshold);
  return parts.map((p, i) => `tvs2.${splitId}.${i + 1}.${threshold}.${Buffer.from(p).toString('base64url')}`);
}

/** A share's fields, or null when the text is no share of either format (tvs1: splitId ''). */
export function parseShare(text: string): ParsedShare | null {
  const v2 = SHARE_V2.exec(text);
  if (v2 !== null) {
    return { text, splitId: v2[1], index: Number(v2[2]), threshold: Number(v2[3]) };
  }
  return SHARE_V1.test(text) ? { text, splitId: '', index: 0, threshold: 0 } : null;
}

export function isShare(text: string): boolean {
  return parseShare(text) !== null;
}

/**
 * What a split records of each share: SHA-256 of its whole text. Without the share it checks nothing about
 * the key (a share alone is uniformly random), and nobody can make a text with a recorded digest.
 */
export function shareDigest(share: string): string {
  return createHash('sha256').update(share, 'utf8').digest('hex');
}

function shareBytes(share: string): Uint8Array {
  const base64 = SHARE_V2.exec(share)?.[4] ?? SHARE_V1.exec(share)?.[1] ?? '';
  return new Uint8Array(Buffer.from(base64, 'base64url'));
}

/**
 * The master keys from these shares, or null while they are too few (or from different splits): what
 * they combine to is then not a valid VAULT_MASTER_KEYS text.
 */
export async function combineShares(shares: string[]): Promise<MasterKey[] | null> {
  if (shares.length < 2) {
    return null;
  }
  const bytes = shares.map(shareBytes);
  if (new Set(bytes.map((b) => b.length)).size !== 1 || bytes[0].length < 2) {
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
