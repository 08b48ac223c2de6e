import type { EntityManager } from 'typeorm';
import { ApiError } from '../common/api-error';
import { ParsedShare, parseShare, shareDigest } from './shamir';

/**
 * The unseal shares' gate: `keys:split` records each split's threshold and share digests (table
 * unseal_splits), and a sealed vault takes only shares of its newest split whose digest matches, so a
 * junk, altered or foreign share is refused at once (400) and never joins the held shares. Database only:
 * it works while sealed.
 */

interface SplitRow {
  id: string;
  threshold: number;
  share_digests: string[];
}

/** Records a split keys:split just made (splitMasterKeys' shares, in order); from now on only its shares unseal. */
export async function recordSplit(
  db: EntityManager,
  shares: string[],
): Promise<{ id: string; threshold: number }> {
  const parsed = shares.map(parseShare);
  const first = parsed[0];
  const oneSplit = parsed.every(
    (p, i) =>
      p !== null && p.splitId === first?.splitId && p.index === i + 1 && p.threshold === first.threshold,
  );
  if (first === undefined || first === null || first.splitId === '' || !oneSplit) {
    throw new Error('recordSplit needs every share of one split, in order (splitMasterKeys)');
  }
  await db.query('INSERT INTO unseal_splits (id, threshold, share_digests) VALUES ($1, $2, $3::text[])', [
    first.splitId,
    first.threshold,
    shares.map(shareDigest),
  ]);
  return { id: first.splitId, threshold: first.threshold };
}

/** The share, when it is one of the newest recorded split's; 400 otherwise, saying why (never the share). */
export async function checkShare(db: EntityManager, text: string): Promise<ParsedShare> {
  const share = parseShare(text);
  if (share === null) {
    throw ApiError.badRequest(
      'share is not an unseal share (tvs2.<split>.<index>.<threshold>.<base64url>, from keys:split)',
    );
  }
  if (share.splitId === '') {
    throw ApiError.badRequest(
      'share is in the old format (tvs1), which cannot be checked on its own: make new shares with keys:split',
    );
  }
  const split = await newestSplit(db);
  if (split === null) {
    throw ApiError.badRequest('no key split is recorded in this vault: run keys:split first');
  }
  if (share.splitId !== split.id) {
    throw ApiError.badRequest(
      'share is not of the current key split of this vault (another split, or a replaced one)',
    );
  }
  if (share.threshold !== split.threshold || share.index > split.share_digests.length) {
    throw ApiError.badRequest('share names an index or threshold its split does not have');
  }
  if (shareDigest(text) !== split.share_digests[share.index - 1]) {
    throw ApiError.badRequest('share does not match the record of its split: altered, mistyped or forged');
  }
  return share;
}

async function newestSplit(db: EntityManager): Promise<SplitRow | null> {
  try {
    const rows: SplitRow[] = await db.query(
      'SELECT id, threshold, share_digests FROM unseal_splits ORDER BY seq DESC LIMIT 1',
    );
    return rows[0] ?? null;
  } catch (err) {
    // Not migrated yet (42P01, undefined table): no split can be recorded.
    if ((err as { code?: string }).code === '42P01') {
      return null;
    }
    throw err;
  }
}
