import { Injectable } from '@nestjs/common';
import type { Principal } from '../access/principal';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { Transactions } from '../database/transactions';
import { AUDIT_ENTITY_TYPES, AuditRow } from './audit-event';
import { AuditService } from './audit.service';
import { ListLogsQueryDto, LogDto, LogEntityTypeDto, presentLog } from './dto/log.dto';

/** GET /logs: the caller's tenant's records, newest first; reading them is itself recorded. */
@Injectable()
export class LogsService {
  constructor(
    private readonly audit: AuditService,
    private readonly transactions: Transactions,
  ) {}

  async list(principal: Principal, query: ListLogsQueryDto): Promise<Page<LogDto>> {
    const where = ['tenant_id = $1'];
    const params: unknown[] = [principal.tenantId];
    const filter = (column: string, op: string, value: unknown): void => {
      if (value !== undefined) {
        params.push(value);
        where.push(`${column} ${op} $${params.length}`);
      }
    };
    filter('entity_type', '=', query.entity_type);
    filter('entity_id', '=', query.entity_id);
    filter('created_at', '>=', query.start_date);
    filter('created_at', '<', query.end_date);
    filter('actor_id', '=', query.actor_id);
    filter('operation', '=', query.operation);
    filter('outcome', '=', query.outcome);
    const conditions = where.join(' AND ');
    const m = this.transactions.manager;
    const rows: AuditRow[] = await m.query(
      `SELECT * FROM audit_records WHERE ${conditions} ORDER BY created_at DESC, id DESC
       LIMIT ${query.size} OFFSET ${pageOffset(query)}`,
      params,
    );
    const [{ total }]: { total: string }[] = await m.query(
      `SELECT count(*) AS total FROM audit_records WHERE ${conditions}`,
      params,
    );
    await this.audit.record({
      tenantId: principal.tenantId,
      actor: principal,
      entityType: 'log',
      entityId: null,
      operation: 'read',
      message: 'Logs listed',
    });
    return pageOf(rows.map(presentLog), Number(total), query);
  }

  entityTypes(): LogEntityTypeDto[] {
    return Object.entries(AUDIT_ENTITY_TYPES).map(([value, display_name]) => ({ display_name, value }));
  }
}
