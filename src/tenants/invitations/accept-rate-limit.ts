import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { RateLimits } from '../../rate-limits/rate-limits.service';

/**
 * Per-client limit on the public acceptance routes (RATE_LIMIT_INVITATION_ACCEPT, 20 a minute), so
 * invitation secrets cannot be guessed by trying many. The client is the socket's peer, or behind a
 * trusted proxy (TRUST_PROXY) the address X-Forwarded-For names. Counted in the shared store, so the
 * bound holds across replicas.
 */
@Injectable()
export class AcceptRateLimit implements CanActivate {
  constructor(private readonly limits: RateLimits) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const req = context.switchToHttp().getRequest<Request>();
    await this.limits.take(this.limits.invitationAccept, this.limits.clientOf(req), req);
    return true;
  }
}
