import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { Permission } from '../access/permissions';
import type { Principal } from '../access/principal';
import { ApplicationsService } from '../applications/applications.service';
import { ApiError } from '../common/api-error';
import { RateLimits } from '../rate-limits/rate-limits.service';

export const API_KEY_HEADER = 'bt-api-key';

/**
 * The one way a request's caller is established: its BT-API-KEY, a known application, and the permissions
 * the route needs. Used by the global guard and by /proxy (which authenticates only on some routes).
 * Rate limits wrap the lookup: an address over the unauthenticated limit is refused before it (from
 * memory, no database), a missing or unknown key counts against the address, and a known caller counts
 * against its application and tenant (RateLimit headers on the answer).
 */
@Injectable()
export class Authenticator {
  constructor(
    private readonly applications: ApplicationsService,
    private readonly limits: RateLimits,
  ) {}

  async authenticate(req: Request, res: Response, required: readonly Permission[] = []): Promise<Principal> {
    this.limits.refuseFloodingAddress(req);
    const key = req.headers[API_KEY_HEADER];
    if (typeof key !== 'string' || key === '') {
      await this.limits.countUnauthenticated(req);
      throw ApiError.unauthorized();
    }
    const principal = await this.applications.authenticate(key);
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
}
