import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { AuthenticatedRequest, PUBLIC_ROUTE, REQUIRED_PERMISSIONS } from '../access/decorators';
import type { Permission } from '../access/permissions';
import { Authenticator } from './authenticator.service';

/** The one global guard: every route needs a valid BT-API-KEY unless marked @Public(), then its permissions. */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly authenticator: Authenticator,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    if (this.reflector.getAllAndOverride<boolean>(PUBLIC_ROUTE, targets) === true) {
      return true;
    }
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const required =
      this.reflector.getAllAndOverride<Permission[] | undefined>(REQUIRED_PERMISSIONS, targets) ?? [];
    const response = context.switchToHttp().getResponse<Response>();
    request.principal = await this.authenticator.authenticate(request, response, required);
    return true;
  }
}
