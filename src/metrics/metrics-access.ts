import { hashSecret, safeEqualHex } from '../crypto/secrets';

/**
 * Whether a request's `Authorization` header carries the operator's METRICS_TOKEN as a bearer token,
 * compared in constant time (as SHA-256 digests, so the lengths always match). No token configured: false.
 */
export function carriesMetricsToken(authorization: string | undefined, token: string | null): boolean {
  if (token === null || authorization === undefined) {
    return false;
  }
  const match = /^Bearer +(\S+) *$/i.exec(authorization);
  return match !== null && safeEqualHex(hashSecret(match[1]), hashSecret(token));
}
