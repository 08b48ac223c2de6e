import { CanActivate, ExecutionContext, Injectable, mixin, Type } from '@nestjs/common';
import type { Request } from 'express';
import type { Limit } from './limit';
import { RateLimits } from './rate-limits.service';

/**
 * A guard that counts every request against one per-address limit (`limitOf` picks it from RateLimits),
 * keyed by the client as the limits count it (RateLimits.clientOf: behind TRUST_PROXY the forwarded
 * client, an IPv6 client by its /64); 429 past it, refused requests counted too.
 */
export function AddressRateLimit(limitOf: (limits: RateLimits) => Limit): Type<CanActivate> {
  @Injectable()
  class AddressRateLimitGuard implements CanActivate {
    constructor(private readonly limits: RateLimits) {}

    async canActivate(context: ExecutionContext): Promise<boolean> {
      const req = context.switchToHttp().getRequest<Request>();
      await this.limits.take(limitOf(this.limits), this.limits.clientOf(req), req);
      return true;
    }
  }
  return mixin(AddressRateLimitGuard);
}
