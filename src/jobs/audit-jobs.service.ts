import { Injectable, Logger } from '@nestjs/common';
import { SealError } from '../audit/audit-chain';
import { AuditChain } from '../audit/audit-chain.service';
import { AuditCheckpoints } from '../audit/audit-checkpoints.service';
import { AuditRetention } from '../audit/audit-retention.service';
import { Clock } from '../common/clock';
import { JobRunner } from './job-runner';

/**
 * The audit trail's scheduled work: chaining new records, logging new signed checkpoints, and deleting
 * records and failed-authentication counts past AUDIT_RETENTION_DAYS.
 */
@Injectable()
export class AuditJobsService {
  private readonly logger = new Logger('AuditJobs');

  constructor(
    private readonly chain: AuditChain,
    private readonly retention: AuditRetention,
    private readonly clock: Clock,
    private readonly jobs: JobRunner,
    private readonly checkpoints: AuditCheckpoints,
  ) {}

  /** Logs each tenant's new signed chain head: the log output keeps checkpoints outside the database. */
  async logCheckpoints(): Promise<void> {
    await this.jobs.runExclusive('audit-checkpoint', async () => {
      await this.checkpoints.logNew();
    });
  }

  async seal(): Promise<void> {
    await this.jobs.runExclusive('audit-seal', async () => {
      await this.sealLogged('audit-seal');
    });
  }

  /**
   * Chains new records; whether it did. A failure is logged with its SQLSTATE and the record sealing stopped
   * at (never the message, which may quote values): enough to tell a lock timeout from a broken chain.
   */
  private async sealLogged(job: string): Promise<boolean> {
    try {
      await this.chain.sealAll({ wait: false });
      return true;
    } catch (err) {
      const sealing = err instanceof SealError ? err : null;
      this.logger.error(
        {
          job,
          err: {
            type: sealing?.type ?? (err instanceof Error ? err.name : 'unknown'),
            code: sealing?.code ?? null,
          },
          stoppedAt: sealing?.stoppedAt ?? null,
        },
        `${job} failed`,
      );
      return false;
    }
  }

  async deleteExpired(): Promise<void> {
    await this.jobs.runExclusive('audit-retention', async () => {
      // Chain first: only chained records are deleted, and the anchor must name a link.
      if (!(await this.sealLogged('audit-retention'))) {
        return;
      }
      const deleted = await this.retention.deleteExpired(this.clock.now());
      if (deleted > 0) {
        this.logger.log({ deleted }, 'audit records past retention deleted');
      }
      const authFailures = await this.retention.deleteExpiredAuthFailures(this.clock.now());
      if (authFailures > 0) {
        this.logger.log({ deleted: authFailures }, 'failed-authentication counts past retention deleted');
      }
    });
  }
}
