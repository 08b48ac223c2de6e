import { Injectable } from '@nestjs/common';
import type { Principal } from '../access/principal';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { Transactions } from '../database/transactions';
import { WhereClause } from '../database/where-clause';
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
    const where = new WhereClause()
      .andIf('tenant_id', '=', principal.tenantId)
      .andIf('entity_type', '=', query.entity_type)
      .andIf('created_at', '>=', query.start_date)
      .andIf('created_at', '<', query.end_date)
      .andIf('actor_id', '=', query.actor_id)
      .andIf('operation', '=', query.operation)
      .andIf('outcome', '=', query.outcome);
    if (query.entity_id !== undefined) {
      // A token is also found in the records of actions on several tokens: a reaction's or a proxied
      // call's detokenization, a list, a search, a tokenize (token_ids, GIN-indexed).
      const id = where.param(query.entity_id);
      where.and(`(entity_id = ${id} OR token_ids @> ARRAY[${id}::text])`);
    }
    const m = this.transactions.manager;
    const rows: AuditRow[] = await m.query(
      `SELECT * FROM audit_records WHERE ${where.text} ORDER BY created_at DESC, id DESC
       LIMIT ${query.size} OFFSET ${pageOffset(query)}`,
      where.values,
    );
    const [{ total }]: { total: string }[] = await m.query(
      `SELECT count(*) AS total FROM audit_records WHERE ${where.text}`,
      where.values,
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
