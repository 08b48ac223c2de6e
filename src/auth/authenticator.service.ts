import { Injectable } from '@nestjs/common';
import type { IncomingHttpHeaders } from 'node:http';
import type { Permission } from '../access/permissions';
import type { Principal } from '../access/principal';
import { ApplicationsService } from '../applications/applications.service';
import { ApiError } from '../common/api-error';

export const API_KEY_HEADER = 'bt-api-key';

/**
 * The one way a request's caller is established: its BT-API-KEY, a known application, and the permissions
 * the route needs. Used by the global guard and by /proxy (which authenticates only on some routes).
 */
@Injectable()
export class Authenticator {
  constructor(private readonly applications: ApplicationsService) {}

  async authenticate(headers: IncomingHttpHeaders, required: readonly Permission[] = []): Promise<Principal> {
    const key = headers[API_KEY_HEADER];
    if (typeof key !== 'string' || key === '') {
      throw ApiError.unauthorized();
    }
    const principal = await this.applications.authenticate(key);
    if (principal === null) {
      throw ApiError.unauthorized('The BT-API-KEY is not valid.');
    }
    const missing = required.filter((p) => !principal.permissions.has(p));
    if (missing.length > 0) {
      throw ApiError.forbidden(`The application lacks the permission ${missing.join(', ')}.`);
    }
    return principal;
  }
}
