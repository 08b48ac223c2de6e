import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RateLimits } from '../rate-limits/rate-limits.service';

/**
 * /health/ready is public and checks the database and the keys: limited per client address
 * (RATE_LIMIT_HEALTH, 300 in 10 s by default, counted per replica), far above an orchestrator's probe a
 * second, so a probe is never refused while a flood from one address is.
 */
@Injectable()
export class HealthRateLimit implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    await this.limits.take(this.limits.health, this.limits.clientOf(req), req);
    return true;
  }
}
