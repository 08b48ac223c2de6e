import { Inject, Injectable, Logger } from '@nestjs/common';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { JobsRepository } from './jobs.repository';

/**
 * Runs a job at most once at a time: in this process (an overlap guard) and across replicas sharing the
 * database (a PostgreSQL advisory lock held while it runs; the embedded database belongs to one process,
 * so the guard is enough there; see JobsRepository.whileLocked). Failures are logged by job name and error
 * type, never message.
 */
@Injectable()
export class JobRunner {
  private readonly logger = new Logger('Jobs');
  private readonly running = new Set<string>();

  constructor(
    private readonly jobs: JobsRepository,
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
  ) {}

  /** True when `fn` ran here (even if it failed), false when another run of `name` held it. */
  async runExclusive(name: string, fn: () => Promise<void>): Promise<boolean> {
    if (this.running.has(name)) {
      return false;
    }
    this.running.add(name);
    try {
      return this.database.embedded
        ? await this.attempt(name, fn)
        : await this.jobs.whileLocked(`token-vault:job:${name}`, () => this.attempt(name, fn));
    } finally {
      this.running.delete(name);
    }
  }

  private async attempt(name: string, fn: () => Promise<void>): Promise<boolean> {
    try {
      await fn();
    } catch (err) {
      this.logger.error(
        { job: name, err: { type: err instanceof Error ? err.name : 'unknown' } },
        `${name} failed`,
      );
    }
    return true;
  }
}
