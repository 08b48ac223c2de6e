import { AddressRateLimit } from '../rate-limits/address-rate-limit';

/**
 * POST /unseal and /unseal/reset are public: limited per client address (RATE_LIMIT_UNSEAL, 20 a minute),
 * every request counted, refused ones too, so shares cannot be tried by the thousand.
 */
export const UnsealRateLimit = AddressRateLimit((limits) => limits.unseal);
