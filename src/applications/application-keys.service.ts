import { Injectable } from '@nestjs/common';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { Database } from '../database/database.service';
import { ApplicationCache } from './application-cache';
import { ApplicationKey } from './application-key.entity';
import { ApplicationKeysRepository } from './application-keys.repository';
import { ApplicationsService } from './applications.service';
import { ApplicationKeyDto } from './dto/application-key.dto';

/**
 * An application's keys: several at once so a key can be rotated without downtime. Deleting a key revokes
 * it on every replica as the transaction commits (the application cache is evicted through the change
 * feed); deleting the last one leaves the application without a key until a new one is created.
 */
@Injectable()
export class ApplicationKeysService {
  constructor(
    private readonly db: Database,
    private readonly applications: ApplicationsService,
    private readonly keys: ApplicationKeysRepository,
    private readonly cache: ApplicationCache,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal, applicationId: string): Promise<ApplicationKeyDto[]> {
    await this.applications.findManaged(principal, applicationId, 'read the keys of');
    const rows = await this.keys.list(principal.tenantId, applicationId);
    return rows.map(toKeyDto);
  }

  async create(principal: Principal, applicationId: string): Promise<ApplicationKeyDto> {
    const application = await this.applications.findManaged(principal, applicationId, 'create a key for');
    const { row, key } = await this.db.transaction(async () => {
      const issued = await this.applications.issueKey(application, principal.applicationId);
      await this.audit.record(
        auditEvent(principal, 'application', applicationId, 'key.create', `Key ${issued.row.id} created`),
      );
      return issued;
    });
    return { ...toKeyDto(row), key };
  }

  async get(principal: Principal, applicationId: string, id: string): Promise<ApplicationKeyDto> {
    await this.applications.findManaged(principal, applicationId, 'read the keys of');
    const row = await this.keys.find(principal.tenantId, applicationId, id);
    if (row === null) {
      throw ApiError.notFound('Application key');
    }
    return toKeyDto(row);
  }

  async delete(principal: Principal, applicationId: string, id: string): Promise<void> {
    await this.applications.findManaged(principal, applicationId, 'delete a key of');
    const deleted = await this.db.transaction(async () => {
      const count = await this.keys.revoke(principal.tenantId, applicationId, id);
      await this.cache.changed(applicationId);
      if (count > 0) {
        await this.audit.record(
          auditEvent(principal, 'application', applicationId, 'key.delete', `Key ${id} revoked`),
        );
      }
      return count;
    });
    if (deleted === 0) {
      throw ApiError.notFound('Application key');
    }
  }
}

function toKeyDto(row: ApplicationKey): ApplicationKeyDto {
  return {
    id: row.id,
    version: String(row.version),
    created_by: row.createdBy,
    created_at: row.createdAt.toISOString(),
  };
}
