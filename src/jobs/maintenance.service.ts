import { Inject, Injectable, Logger } from '@nestjs/common';
import { DatabaseRuntime } from '../database/database';
import { DATABASE_RUNTIME } from '../database/database-info.module';
import { WriteCounter } from '../tokens/write-counter';
import { JobRunner } from './job-runner';
import { JobsRepository } from './jobs.repository';

const WRITES_BEFORE_EARLY_RUN = 5000;

/**
 * Keeps the planner statistics of the token tables fresh: without them list and search queries fall back
 * to bad plans. PostgreSQL's autovacuum does this on its own; the embedded database has no autovacuum.
 */
@Injectable()
export class MaintenanceService {
  private readonly logger = new Logger('Maintenance');

  constructor(
    private readonly statements: JobsRepository,
    @Inject(DATABASE_RUNTIME) private readonly database: DatabaseRuntime,
    private readonly writes: WriteCounter,
    private readonly jobs: JobRunner,
  ) {}

  /** ANALYZE the token tables; on the embedded database also VACUUM them (dead rows of updates and purges). */
  async analyze(): Promise<void> {
    await this.statements.analyzeTokenTables(this.database.embedded);
  }

  /**
   * Runs early when many rows were written since the last run (a bulk load): the plans of list and search
   * queries depend on statistics that reflect the table's size.
   */
  async runIfBusy(threshold = WRITES_BEFORE_EARLY_RUN): Promise<void> {
    if (this.writes.peek() >= threshold) {
      await this.run();
    }
  }

  /** The scheduled run: no overlapping runs (JobRunner), failures logged without data. */
  async run(): Promise<void> {
    await this.jobs.runExclusive('maintenance', async () => {
      this.writes.take();
      const started = Date.now();
      await this.analyze();
      this.logger.debug({ durationMs: Date.now() - started }, 'token tables analyzed');
    });
  }
}
