import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';

/**
 * Runs a job at most once at a time: in this process (an overlap guard) and across replicas sharing the
 * database (a PostgreSQL session advisory lock held while it runs; the embedded database belongs to one
 * process, so the guard is enough there). Failures are logged by job name and error type, never message.
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
    await runner.connect();
    const lockName = `token-vault:job:${name}`;
    try {
      const [{ locked }] = (await runner.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [
        lockName,
      ])) as { locked: boolean }[];
      if (!locked) {
        return false;
      }
      try {
        return await this.attempt(name, fn);
      } finally {
        await runner.query('SELECT pg_advisory_unlock(hashtext($1))', [lockName]);
      }
    } finally {
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
