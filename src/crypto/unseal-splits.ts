import { ApiError } from '../common/api-error';
import { ParsedShare, parseShare, shareDigest } from './shamir';
import type { TenantKeysRepository } from './tenant-keys.repository';

/**
 * The unseal shares' gate: `keys:split` records each split's threshold and share digests (table
 * unseal_splits), and a sealed vault takes only shares of its newest split whose digest matches, so a
 * junk, altered or foreign share is refused at once (400) and never joins the held shares. Database only:
 * it works while sealed.
 */

type SplitRecord = Pick<TenantKeysRepository, 'insertSplit' | 'newestSplit'>;

/** Records a split keys:split just made (splitMasterKeys' shares, in order); from now on only its shares unseal. */
export async function recordSplit(
  splits: SplitRecord,
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
  await splits.insertSplit(first.splitId, first.threshold, shares.map(shareDigest));
  return { id: first.splitId, threshold: first.threshold };
}

/** The share, when it is one of the newest recorded split's; 400 otherwise, saying why (never the share). */
export async function checkShare(splits: SplitRecord, text: string): Promise<ParsedShare> {
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
  const split = await splits.newestSplit();
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
