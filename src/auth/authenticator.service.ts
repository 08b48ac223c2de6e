import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Permission } from '../access/permissions';
import type { Principal } from '../access/principal';
import { ApplicationPrincipals } from '../applications/application-principals.service';
import { ApiError } from '../common/api-error';
import { PerReplicaCache } from '../common/per-replica-cache';
import { hashSecret } from '../crypto/secrets';
import { RateLimits } from '../rate-limits/rate-limits.service';
import { SESSION_KEY_PREFIX, SessionPrincipals } from '../sessions/session-principals.service';

export const API_KEY_HEADER = 'bt-api-key';

/** As long as a valid key stays cached (ApplicationCache): a key created meanwhile waits no longer. */
const UNKNOWN_KEY_TTL_MS = 10_000;
const UNKNOWN_KEY_ENTRIES = 10_000;
const UNKNOWN = {};

/**
 * The one way a request's caller is established: its BT-API-KEY, a known application, and the permissions
 * the route needs. Used by the global guard and by /proxy (which authenticates only on some routes).
 * Rate limits wrap the lookup: a missing or unknown key counts against the client's address (the limit for
 * anonymous traffic; a request without a key from an address over it is refused from memory), and a known
 * caller counts against its application and tenant only (RateLimit headers on the answer). A key is looked
 * up even from an address over the anonymous limit: bad keys or anonymous calls from one address (a
 * backend's proxy calls, say) must not lock that address's valid keys out. An unknown key from there is
 * answered 429, like any anonymous request past the limit, and the same unknown key sent again from there
 * (a client stuck on a revoked key) is refused from memory, without another database lookup.
 */
@Injectable()
export class Authenticator {
  constructor(
    private readonly applications: ApplicationPrincipals,
    private readonly limits: RateLimits,
    private readonly sessions: SessionPrincipals,
  ) {}

  /** Key hashes found unknown lately (per replica); consulted only for addresses over the anonymous limit. */
  private readonly unknownKeys = new PerReplicaCache<object>(UNKNOWN_KEY_TTL_MS, UNKNOWN_KEY_ENTRIES);

  async authenticate(req: Request, res: Response, required: readonly Permission[] = []): Promise<Principal> {
    const key = req.headers[API_KEY_HEADER];
    if (typeof key !== 'string' || key === '') {
      await this.limits.countUnauthenticated(req);
      throw ApiError.unauthorized();
    }
    const principal = await this.lookUp(req, key);
    if (principal === null) {
      await this.limits.countUnauthenticated(req);
      throw ApiError.unauthorized('The BT-API-KEY is not valid.');
    }
    await this.limits.admit(principal, req, res);
    // Known from here on, also when refused below: the refusal is audited as this caller's (AuditService).
    (req as Request & { principal?: Principal }).principal = principal;
    const missing = required.filter((p) => !principal.permissions.has(p));
    if (missing.length > 0) {
      throw ApiError.forbidden(`The application lacks the permission ${missing.join(', ')}.`);
    }
    return principal;
  }

  private async lookUp(req: Request, key: string): Promise<Principal | null> {
    const hash = hashSecret(key);
    if (this.unknownKeys.get(hash) !== undefined && this.limits.addressBlocked(req)) {
      return null;
    }
    const principal = key.startsWith(SESSION_KEY_PREFIX)
      ? await this.sessions.authenticateHash(hash)
      : await this.applications.authenticateHash(hash);
    if (principal === null) {
      this.unknownKeys.set(hash, UNKNOWN);
    }
    return principal;
  }
}
