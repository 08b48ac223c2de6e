import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Response } from 'express';
import { from, map, Observable, of, switchMap } from 'rxjs';
import type { AuthenticatedRequest } from '../access/decorators';
import { rawBodyHash } from '../common/request-body';
import { AtomicWrites } from './atomic-writes';
import { DISCLOSES_METADATA, DisclosureReplay, ReplayingRequest } from './discloses';
import { Idempotency } from './idempotency.service';

/**
 * BT-IDEMPOTENCY-KEY for every authenticated POST, PUT and PATCH route (after the guard, so the key is the
 * caller's own). Public routes take none: there is no caller to scope a stored answer to.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly idempotency: Idempotency,
    private readonly atomic: AtomicWrites,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const req = http.getRequest<AuthenticatedRequest & ReplayingRequest>();
    const principal = req.principal;
    // Public routes (the invitation page, /proxy, which handles its keys itself) are not looked at.
    const key = principal === undefined ? null : this.idempotency.keyOf(req);
    if (key === null || principal === undefined) {
      return next.handle();
    }
    const who = this.idempotency.scopeOf(principal);
    const discloses = this.reflector.get<DisclosureReplay | undefined>(
      DISCLOSES_METADATA,
      context.getHandler(),
    );
    const res = http.getResponse<Response>();
    const bodyHash = rawBodyHash(req);
    if (discloses !== 'recheck') {
      // Everything but a reaction (whose code may call out) rolls back: claim, work and answer commit together.
      return this.atomic.run(req, res, { key, who, bodyHash }, discloses === 'rerun', () => next.handle());
    }
    return from(this.idempotency.handle(req, res, key, who, bodyHash, discloses)).pipe(
      switchMap((run) => (run ? next.handle() : of(undefined))),
      // A kept answer the handler was given to recheck: sent only now that its checks have passed.
      map((result: unknown) => {
        if (req.pendingReplay === undefined) {
          return result;
        }
        this.idempotency.replayChecked(res, req.pendingReplay);
        return undefined;
      }),
    );
  }
}
