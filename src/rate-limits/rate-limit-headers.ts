import { ApiError } from '../common/api-error';
import type { Usage } from './limit';

/**
 * The IETF RateLimit header fields, in the structured-field syntax of draft-ietf-httpapi-ratelimit-headers-10
 * (September 2025): `RateLimit-Policy` lists each policy as a string item with its quota `q` and window
 * `w` in seconds, `RateLimit` the same policies with the remaining quota `r` and seconds to reset `t`:
 *
 *   RateLimit-Policy: "application";q=2000;w=10
 *   RateLimit: "application";r=1999;t=10
 */
export function rateLimitHeaders(usages: readonly Usage[]): Record<string, string> {
  if (usages.length === 0) {
    return {};
  }
  return {
    'RateLimit-Policy': usages
      .map((u) => `"${u.name}";q=${u.policy.points};w=${u.policy.seconds}`)
      .join(', '),
    RateLimit: usages.map((u) => `"${u.name}";r=${u.remaining};t=${seconds(u.resetMs)}`).join(', '),
  };
}

function seconds(ms: number): number {
  return Math.max(0, Math.ceil(ms / 1000));
}

const WHO: Record<string, string> = {
  application: 'this application',
  tenant: 'this tenant',
  unauthenticated: 'requests without a valid BT-API-KEY from this address',
  'proxy-address': 'this proxy from this address',
  'invitation-accept': 'invitation pages from this address',
  unseal: 'unseal requests from this address',
  'dedup-writes': 'deduplicating writes of this application',
  health: 'readiness probes from this address',
};

/** The 429 for the first exceeded limit: the common error body, Retry-After and the RateLimit fields. */
export function tooManyRequests(exceeded: Usage, usages: readonly Usage[]): ApiError {
  const who = WHO[exceeded.name] ?? exceeded.name;
  const base = ApiError.tooManyRequests(
    `Rate limit reached for ${who}: at most ${exceeded.policy.points} in ${exceeded.policy.seconds} seconds.`,
    Math.max(1, seconds(exceeded.resetMs)),
  );
  return new ApiError(429, base.detail, undefined, { ...base.headers, ...rateLimitHeaders(usages) });
}
