import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';

/**
 * Runs a job at most once at a time: in this process (an overlap guard) and across replicas sharing the
 * database (a PostgreSQL advisory lock held while it runs; the embedded database belongs to one process,
 * so the guard is enough there). The lock belongs to a transaction left open for the job's duration, not
 * to the session: behind a pooler in transaction mode a session lock would stay on whichever server
 * connection took it, and its unlock would go to another. Failures are logged by job name and error type,
 * never message.
 */
@Injectable()
export class JobRunner {
  private readonly logger = new Logger('Jobs');
  private readonly running = new Set<string>();

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
  ) {}

  /** True when `fn` ran here (even if it failed), false when another run of `name` held it. */
  async runExclusive(name: string, fn: () => Promise<void>): Promise<boolean> {
    if (this.running.has(name)) {
      return false;
    }
    this.running.add(name);
    try {
      return this.database.embedded ? await this.attempt(name, fn) : await this.withLock(name, fn);
    } finally {
      this.running.delete(name);
    }
  }

  private async withLock(name: string, fn: () => Promise<void>): Promise<boolean> {
    const runner = this.dataSource.createQueryRunner();
    const lockName = `token-vault:job:${name}`;
    try {
      await runner.startTransaction();
      const [{ locked }] = (await runner.query('SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked', [
        lockName,
      ])) as { locked: boolean }[];
      return locked && (await this.attempt(name, fn));
    } finally {
      // Ends the transaction and with it the lock; a connection lost meanwhile took both with it.
      await runner.rollbackTransaction().catch(() => undefined);
      await runner.release();
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
