import type { KeyObject } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Database } from '../database/database.service';
import { anchorSignature } from './audit-chain';
import { AuditChain } from './audit-chain.service';
import { AuditChainsRepository } from './audit-chains.repository';
import { AuditRecordsRepository } from './audit-records.repository';
import { presentLog, LogDto } from './dto/log.dto';

const DELETE_BATCH = 1000;
const EXPORT_BATCH = 1000;

/**
 * Retention (AUDIT_RETENTION_DAYS) and export of the audit trail. Retention deletes the oldest chained
 * records of a tenant in batches, and before each batch moves the tenant's signed anchor to the last link
 * it deletes: verification then starts from the anchor, so what remains still verifies.
 */
@Injectable()
export class AuditRetention {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly db: Database,
    private readonly records: AuditRecordsRepository,
    private readonly chains: AuditChainsRepository,
    private readonly chain: AuditChain,
  ) {}

  /** Deletes every chained record older than the retention period; how many. */
  async deleteExpired(now: Date, batchSize = DELETE_BATCH): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.audit.retentionDays * 86_400_000);
    let total = 0;
    for (const tenantId of await this.chain.tenants()) {
      for (;;) {
        const deleted = await this.deleteBatch(tenantId, cutoff, batchSize);
        total += deleted;
        if (deleted < batchSize) {
          break;
        }
      }
    }
    return total;
  }

  /** Deletes the hourly failed-authentication counts older than the retention period; how many. */
  async deleteExpiredAuthFailures(now: Date): Promise<number> {
    const cutoff = new Date(now.getTime() - this.config.audit.retentionDays * 86_400_000);
    return this.records.deleteAuthFailuresBefore(cutoff);
  }

  private deleteBatch(tenantId: string, cutoff: Date, batchSize: number): Promise<number> {
    return this.db.transaction(async () => {
      const head = await this.chains.lockHead(tenantId);
      // Only a prefix of the chain goes: the oldest links, up to the first one still within retention.
      const rows = await this.chains.linksAfterAnchor(tenantId, head.anchor_seq, cutoff, batchSize);
      const prefix = rows.findIndex((r) => !r.old);
      const last = prefix === -1 ? rows.at(-1) : rows[prefix - 1];
      if (last === undefined) {
        return 0;
      }
      const { keyId, key } = (await this.chain.key(tenantId)) as { keyId: string; key: KeyObject };
      const signature = anchorSignature(key, tenantId, last.seq, last.hash);
      await this.chains.moveAnchor(tenantId, last.seq, last.hash, keyId, signature);
      await this.chains.deleteLinksWithRecords(tenantId, head.anchor_seq, last.seq);
      return prefix === -1 ? rows.length : prefix;
    });
  }

  /** Every record created at or after `since`, oldest first, one batch at a time (for JSON Lines). */
  async *export(
    since: Date,
    tenantId?: string,
  ): AsyncGenerator<LogDto & { seq: string | null; hash: string | null }> {
    let after: { createdAt: Date; id: string } | null = null;
    for (;;) {
      const rows = await this.records.exportPage(since, tenantId ?? null, after, EXPORT_BATCH);
      for (const row of rows) {
        yield { ...presentLog(row), seq: row.seq, hash: row.hash };
      }
      if (rows.length < EXPORT_BATCH) {
        return;
      }
      const tail = rows[rows.length - 1];
      after = { createdAt: tail.created_at, id: tail.id };
    }
  }
}
