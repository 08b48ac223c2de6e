import { createHmac } from 'node:crypto';
import { text } from './filter-args';
import { fail, VaultFilter } from './filter-kit';

const HMAC_ALGORITHMS = new Set(['sha256', 'sha512']);

/** `hmac: algo, key`: hex HMAC of the input with sha256 or sha512. */
export const hmac: VaultFilter = (_run, input, algorithm, key) => {
  if (typeof algorithm !== 'string' || !HMAC_ALGORITHMS.has(algorithm)) {
    return fail('the algorithm must be sha256 or sha512');
  }
  if (typeof key !== 'string' || key === '') {
    return fail('the key must be a non-empty string');
  }
  return createHmac(algorithm, key).update(text(input), 'utf8').digest('hex');
};

export const encodeFilters: Record<string, VaultFilter> = {
  hmac,
  /** `to_base64`: base64 of the UTF-8 bytes. */
  to_base64: (_run, input) => Buffer.from(text(input), 'utf8').toString('base64'),
  /** `to_base16`: lowercase hex of the UTF-8 bytes. */
  to_base16: (_run, input) => Buffer.from(text(input), 'utf8').toString('hex'),
};
