import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApplicationsService } from '../applications/applications.service';
import { ApiError } from '../common/api-error';
import { AuthenticatedRequest, PUBLIC_ROUTE, REQUIRED_PERMISSIONS } from '../access/decorators';
import type { Permission } from '../access/permissions';

export const API_KEY_HEADER = 'bt-api-key';

/** The one global guard: every route needs a valid BT-API-KEY unless marked @Public(), then its permissions. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly applications: ApplicationsService,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true) {
      return true;
    }
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const key = request.headers[API_KEY_HEADER];
    if (typeof key !== 'string' || key === '') {
      throw ApiError.unauthorized();
    }
    const principal = await this.applications.authenticate(key);
    if (principal === null) {
      throw ApiError.unauthorized('The BT-API-KEY is not valid.');
    }
    request.principal = principal;
    const required =
      this.reflector.getAllAndOverride<Permission[] | undefined>(REQUIRED_PERMISSIONS, targets) ?? [];
    const missing = required.filter((p) => !principal.permissions.has(p));
    if (missing.length > 0) {
      throw ApiError.forbidden(`The application lacks the permission ${missing.join(', ')}.`);
    }
    return true;
  }
}
