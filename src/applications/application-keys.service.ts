import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { InjectDataSource } from '@nestjs/typeorm';
import { Principal } from '../access/principal';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { ApiError } from '../common/api-error';
import { ApplicationCache } from './application-cache';
import { ApplicationKey } from './application-key.entity';
import { ApplicationKeyStore } from './application-key.store';
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
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly applications: ApplicationsService,
    private readonly store: ApplicationKeyStore,
    private readonly cache: ApplicationCache,
    private readonly audit: AuditService,
  ) {}

  async list(principal: Principal, applicationId: string): Promise<ApplicationKeyDto[]> {
    await this.applications.findManaged(principal, applicationId, 'read the keys of');
    const rows = await this.store.list(this.dataSource.manager, principal.tenantId, applicationId);
    return rows.map(toKeyDto);
  }

  async create(principal: Principal, applicationId: string): Promise<ApplicationKeyDto> {
    const application = await this.applications.findManaged(principal, applicationId, 'create a key for');
    const { row, key } = await this.dataSource.transaction(async (manager) => {
      const issued = await this.store.issue(manager, application, principal.applicationId);
      await this.audit.record(
        auditEvent(principal, 'application', applicationId, 'key.create', `Key ${issued.row.id} created`),
        manager,
      );
      return issued;
    });
    return { ...toKeyDto(row), key };
  }

  async get(principal: Principal, applicationId: string, id: string): Promise<ApplicationKeyDto> {
    await this.applications.findManaged(principal, applicationId, 'read the keys of');
    const row = await this.store.find(this.dataSource.manager, principal.tenantId, applicationId, id);
    if (row === null) {
      throw ApiError.notFound('Application key');
    }
    return toKeyDto(row);
  }

  async delete(principal: Principal, applicationId: string, id: string): Promise<void> {
    await this.applications.findManaged(principal, applicationId, 'delete a key of');
    const deleted = await this.dataSource.transaction(async (manager) => {
      const count = await this.store.revoke(manager, principal.tenantId, applicationId, id);
      await this.cache.changed(manager, applicationId);
      if (count > 0) {
        await this.audit.record(
          auditEvent(principal, 'application', applicationId, 'key.delete', `Key ${id} revoked`),
          manager,
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
