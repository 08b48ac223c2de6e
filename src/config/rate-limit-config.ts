/** One limit: at most `points` requests (or writes) per key in a fixed window of `seconds`. */
export interface LimitPolicy {
  points: number;
  seconds: number;
}

/** The shared rate limits (src/rate-limits/); every one configurable as `<requests>/<seconds>`. */
export interface RateLimitConfig {
  /** Requests per application (the hosted vault's private-application limit: 2000 per 10 s). */
  application: LimitPolicy;
  /** Requests per tenant, all its applications together. */
  tenant: LimitPolicy;
  /** Requests per client address without a valid BT-API-KEY (the hosted vault's per-IP limit). */
  unauthenticated: LimitPolicy;
  /** Requests per require_auth:false proxy and client address (the hosted vault: 50 per 10 s). */
  proxyAddress: LimitPolicy;
  /** Invitation accept page requests per client address (secrets cannot be guessed by trying many). */
  invitationAccept: LimitPolicy;
  /** POST /unseal and /unseal/reset per client address: key holders need a few, a guesser is slowed. */
  unseal: LimitPolicy;
  /**
   * /health/ready requests per client address, counted per replica: well above the one probe a second an
   * orchestrator sends (default 300 in 10 s, 30 a second), so probes are never refused.
   */
  health: LimitPolicy;
  /** Shared counters in Redis when set; otherwise in PostgreSQL (one process on the embedded database). */
  redisUrl: string | null;
  /** Prefix of every counter's key (Redis keys, PostgreSQL rows): replicas that share limits share it. */
  keyPrefix: string;
}

type Env = Record<string, string | undefined>;

export class RateLimitConfigError extends Error {}

function policy(env: Env, name: string, fallback: LimitPolicy): LimitPolicy {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') {
    return fallback;
  }
  const match = /^(\d{1,9})\/(\d{1,6})$/.exec(raw);
  if (match === null || Number(match[1]) < 1 || Number(match[2]) < 1 || Number(match[2]) > 86_400) {
    throw new RateLimitConfigError(`${name} must be <requests>/<seconds>, e.g. 100/10 (1 to 86400 seconds)`);
  }
  return { points: Number(match[1]), seconds: Number(match[2]) };
}

/** Parses the RATE_LIMIT_* variables and REDIS_URL; defaults follow the hosted vault's published limits. */
export function loadRateLimitConfig(env: Env): RateLimitConfig {
  const redisUrl = env.REDIS_URL?.trim() ?? '';
  if (redisUrl !== '' && !/^rediss?:\/\/[^\s]+$/.test(redisUrl)) {
    throw new RateLimitConfigError('REDIS_URL must be a redis:// or rediss:// URL');
  }
  const keyPrefix = env.RATE_LIMIT_KEY_PREFIX?.trim() || 'tv-rl';
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(keyPrefix)) {
    throw new RateLimitConfigError('RATE_LIMIT_KEY_PREFIX must be 1-64 letters, digits or _.:-');
  }
  return {
    application: policy(env, 'RATE_LIMIT_APPLICATION', { points: 2000, seconds: 10 }),
    tenant: policy(env, 'RATE_LIMIT_TENANT', { points: 10_000, seconds: 10 }),
    unauthenticated: policy(env, 'RATE_LIMIT_UNAUTHENTICATED', { points: 2000, seconds: 10 }),
    proxyAddress: policy(env, 'RATE_LIMIT_PROXY_ADDRESS', { points: 50, seconds: 10 }),
    invitationAccept: policy(env, 'RATE_LIMIT_INVITATION_ACCEPT', { points: 20, seconds: 60 }),
    unseal: policy(env, 'RATE_LIMIT_UNSEAL', { points: 20, seconds: 60 }),
    health: policy(env, 'RATE_LIMIT_HEALTH', { points: 300, seconds: 10 }),
    redisUrl: redisUrl === '' ? null : redisUrl,
    keyPrefix,
  };
}
