import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiForbiddenResponse, ApiOperation, ApiSecurity, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import type { Permission } from './permissions';
import type { Principal } from './principal';

export const PUBLIC_ROUTE = 'tv:public';
export const REQUIRED_PERMISSIONS = 'tv:permissions';
export const API_KEY_SCHEME = 'BT-API-KEY';

/** Marks a route that needs no API key. */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(PUBLIC_ROUTE, true);

/** Enforces (all of) the permissions and documents the API-key requirement and the 401/403 answers. */
export function RequirePermission(...permissions: Permission[]): MethodDecorator {
  return applyDecorators(
    SetMetadata(REQUIRED_PERMISSIONS, permissions),
    ApiSecurity(API_KEY_SCHEME),
    ApiUnauthorizedResponse({ description: 'Missing or invalid BT-API-KEY.' }),
    ApiForbiddenResponse({ description: `Requires ${permissions.join(' and ')}.` }),
  );
}

/** A protected route in one line: the permission(s) it enforces, what /docs says of it, and its answer. */
export function Route(
  permission: Permission | readonly Permission[],
  summary: string,
  description: string | undefined,
  answer: MethodDecorator,
): MethodDecorator {
  const permissions = typeof permission === 'string' ? [permission] : permission;
  return applyDecorators(RequirePermission(...permissions), ApiOperation({ summary, description }), answer);
}

export interface AuthenticatedRequest extends Request {
  principal?: Principal;
}

/** The authenticated application of the request. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const principal = ctx.switchToHttp().getRequest<AuthenticatedRequest>().principal;
  if (principal === undefined) {
    throw new Error('CurrentPrincipal used on a route without authentication');
  }
  return principal;
});
