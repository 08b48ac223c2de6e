import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { ApiError } from '../common/api-error';
import { DatabaseHealth, MigrationsPending } from './database-health';

/** How long a client is asked to wait: an operator runs the migrate command, which takes seconds. */
export const MIGRATIONS_RETRY_AFTER_SECONDS = 30;

/** Answer whatever the schema: probes, unsealing and metrics say themselves what is not ready. */
const UNGATED = /^\/+(health|unseal|metrics)(\/|$)/i;

/**
 * With MIGRATIONS_RUN=false the vault serves before the operator has migrated: until every migration of
 * this build is applied, data routes answer 503 naming the migrations (with Retry-After), not a 500 from a
 * missing table or an older schema's answer. Once applied, this costs one property read per request.
 */
@Injectable()
export class PendingMigrationsMiddleware implements NestMiddleware {
  constructor(private readonly database: DatabaseHealth) {}

  use(req: Request, _res: Response, next: NextFunction): void {
    // originalUrl: Nest mounts middleware under a path, which Express strips from req.path.
    if (this.database.migrationsApplied || UNGATED.test(req.originalUrl)) {
      next();
      return;
    }
    this.database.checkMigrations().then(
      () => next(),
      (err: unknown) =>
        // Any other failure (the database is down) is left to the route, which answers it as it always has.
        next(
          err instanceof MigrationsPending
            ? new ApiError(
                503,
                `The database schema is not up to date: migrations ${err.message}. Try again once an operator has applied them.`,
                undefined,
                { 'Retry-After': String(MIGRATIONS_RETRY_AFTER_SECONDS) },
              )
            : undefined,
        ),
    );
  }
}
