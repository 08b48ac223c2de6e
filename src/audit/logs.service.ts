import { Injectable } from '@nestjs/common';
import type { Principal } from '../access/principal';
import { Page, pageOf } from '../common/pagination';
import { AUDIT_ENTITY_TYPES } from './audit-event';
import { AuditRecordsRepository } from './audit-records.repository';
import { AuditService } from './audit.service';
import { ListLogsQueryDto, LogDto, LogEntityTypeDto, presentLog } from './dto/log.dto';

/** GET /logs: the caller's tenant's records, newest first; reading them is itself recorded. */
@Injectable()
export class LogsService {
  constructor(
    private readonly audit: AuditService,
    private readonly records: AuditRecordsRepository,
  ) {}

  async list(principal: Principal, query: ListLogsQueryDto): Promise<Page<LogDto>> {
    const { rows, total } = await this.records.findPage(principal.tenantId, query);
    await this.audit.record({
      tenantId: principal.tenantId,
      actor: principal,
      entityType: 'log',
      entityId: null,
      operation: 'read',
      message: 'Logs listed',
    });
    return pageOf(rows.map(presentLog), total, query);
  }

  entityTypes(): LogEntityTypeDto[] {
    return Object.entries(AUDIT_ENTITY_TYPES).map(([value, display_name]) => ({ display_name, value }));
  }
}
