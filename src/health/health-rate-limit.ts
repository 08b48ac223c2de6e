import { AddressRateLimit } from '../rate-limits/address-rate-limit';

/**
 * /health/ready is public and checks the database and the keys: limited per client address
 * (RATE_LIMIT_HEALTH, 300 in 10 s by default, counted per replica), far above an orchestrator's probe a
 * second, so a probe is never refused while a flood from one address is.
 */
export const HealthRateLimit = AddressRateLimit((limits) => limits.health);
