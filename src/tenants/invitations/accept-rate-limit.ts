import { AddressRateLimit } from '../../rate-limits/address-rate-limit';

/**
 * Per-client limit on the public acceptance routes (RATE_LIMIT_INVITATION_ACCEPT, 20 a minute), so
 * invitation secrets cannot be guessed by trying many. The client is the socket's peer, or behind a
 * trusted proxy (TRUST_PROXY) the address X-Forwarded-For names. Counted in the shared store, so the
 * bound holds across replicas.
 */
export const AcceptRateLimit = AddressRateLimit((limits) => limits.invitationAccept);
