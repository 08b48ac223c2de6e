import type { KeyObject } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Transactions } from '../database/transactions';
import { anchorSignature } from './audit-chain';
import { AuditChain } from './audit-chain.service';
import { lockHead } from './audit-heads';
import { recordColumns } from './audit-event';
import type { AuditRow } from './audit-event';
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
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
    const [{ n }]: { n: number }[] = await this.dataSource.query(
      'WITH gone AS (DELETE FROM audit_auth_failures WHERE hour < $1 RETURNING 1) SELECT count(*)::int AS n FROM gone',
      [cutoff],
    );
    return n;
  }

  private deleteBatch(tenantId: string, cutoff: Date, batchSize: number): Promise<number> {
    return this.transactions.run(async () => {
      const m = this.transactions.manager;
      const head = await lockHead(m, tenantId);
      // Only a prefix of the chain goes: the oldest links, up to the first one still within retention.
      const rows: { seq: string; hash: string; old: boolean }[] = await m.query(
        `SELECT l.seq, l.hash, r.created_at < $3 AS old FROM audit_links l
         JOIN audit_records r ON r.xid = l.record_xid AND r.id = l.record_id
         WHERE l.tenant_id = $1 AND l.seq > $2 ORDER BY l.seq LIMIT ${batchSize}`,
        [tenantId, head.anchor_seq, cutoff],
      );
      const prefix = rows.findIndex((r) => !r.old);
      const last = prefix === -1 ? rows.at(-1) : rows[prefix - 1];
      if (last === undefined) {
        return 0;
      }
      const { keyId, key } = (await this.chain.key(tenantId)) as { keyId: string; key: KeyObject };
      await m.query(
        `UPDATE audit_chains SET anchor_seq = $2, anchor_hash = $3, anchor_key_id = $4, anchor_signature = $5
         WHERE tenant_id = $1`,
        [tenantId, last.seq, last.hash, keyId, anchorSignature(key, tenantId, last.seq, last.hash)],
      );
      await m.query(
        `WITH gone AS (
           DELETE FROM audit_links WHERE tenant_id = $1 AND seq > $2 AND seq <= $3 RETURNING record_xid, record_id
         )
         DELETE FROM audit_records r USING gone WHERE r.xid = gone.record_xid AND r.id = gone.record_id`,
        [tenantId, head.anchor_seq, last.seq],
      );
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
      const params: unknown[] = [since, tenantId ?? null];
      let page = '';
      if (after !== null) {
        params.push(after.createdAt, after.id);
        page = 'AND (r.created_at, r.id) > ($3, $4)';
      }
      const rows: (AuditRow & { seq: string | null; hash: string | null })[] = await this.dataSource.query(
        `SELECT ${recordColumns('r')}, l.seq, l.hash FROM audit_records r
         LEFT JOIN audit_links l ON l.tenant_id = r.tenant_id AND l.record_id = r.id
         WHERE r.created_at >= $1 AND ($2::uuid IS NULL OR r.tenant_id = $2) ${page}
         ORDER BY r.created_at, r.id LIMIT ${EXPORT_BATCH}`,
        params,
      );
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
