import { isDeepStrictEqual } from 'node:util';
import { mayReveal, seesMoreIn, transformFor } from '../../access/access';
import type { Principal } from '../../access/principal';
import type { TokenFields } from '../token-fields';

/**
 * Why the principal may not turn `current` into `next`, or null. An update must not show its author more of
 * the stored data than its rules do: a new mask is shown on the update response and to every mask reader, a
 * new fingerprint expression yields a comparable keyed hash, and a new search index fails visibly when it
 * renders empty, so each is an oracle on data the author may not see. Moving a token is likewise refused
 * when the author's rules reveal more in the new containers.
 */
export function patchDenial(principal: Principal, current: TokenFields, next: TokenFields): string | null {
  const newExpressions =
    (next.mask !== null && !isDeepStrictEqual(next.mask, current.mask)) ||
    next.fingerprintExpression !== current.fingerprintExpression ||
    (next.searchIndexes ?? []).some((index) => !(current.searchIndexes ?? []).includes(index));
  if (newExpressions && !mayReveal(principal, current.containers)) {
    return 'Changing mask, fingerprint_expression or search_indexes needs an access rule that reveals the token data.';
  }
  // An expiry deletes the token when it passes: setting, moving or clearing it is the delete permission's.
  if (
    current.expiresAt?.getTime() !== next.expiresAt?.getTime() &&
    transformFor(principal, 'token:delete', current.containers) === null
  ) {
    return 'Changing expires_at needs token:delete on the token: an expiry deletes it.';
  }
  if (seesMoreIn(principal, current.containers, next.containers)) {
    return 'The application may not move tokens to containers where it sees more of their data.';
  }
  return null;
}
