import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RateLimits } from '../rate-limits/rate-limits.service';

/**
 * POST /unseal and /unseal/reset are public: limited per client address (RATE_LIMIT_UNSEAL, 20 a minute),
 * every request counted, refused ones too, so shares cannot be tried by the thousand.
 */
@Injectable()
export class UnsealRateLimit implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    await this.limits.take(this.limits.unseal, this.limits.clientOf(req), req);
    return true;
  }
}
