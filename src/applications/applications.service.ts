import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { AccessRule } from '../access/access-rules';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { ApplicationCache } from './application-cache';
import { Application } from './application.entity';
import { ApplicationKey } from './application-key.entity';
import { ApplicationKeysRepository } from './application-keys.repository';
import { ApplicationsRepository } from './applications.repository';
import { checkGrants, requireGrantable } from './application-grants';
import { ApplicationType } from '../access/application-type';
import {
  ApplicationDto,
  CreateApplicationDto,
  ListApplicationsQueryDto,
  UpdateApplicationDto,
} from './dto/application.dto';
import { Clock } from '../common/clock';
import { Database } from '../database/database.service';
import { generateApiKey, hashSecret } from '../crypto';
import { Events } from '../events/events';
import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';

export interface NewApplication {
  name: string;
  type: ApplicationType;
  permissions: Permission[];
  rules?: AccessRule[];
  /** A key chosen by the operator (bootstrap); generated when absent. */
  key?: string;
  /** False: the application starts without a key (one is added through its keys). */
  createKey?: boolean;
}

/** Managing a tenant's applications: create, list, get, update, delete and regenerate their key. */
@Injectable()
export class ApplicationsService {
  constructor(
    private readonly applications: ApplicationsRepository,
    private readonly keys: ApplicationKeysRepository,
    private readonly cache: ApplicationCache,
    private readonly clock: Clock,
    private readonly db: Database,
    private readonly audit: AuditService,
    private readonly events: Events,
  ) {}

  /**
   * Inserts an application and returns its key once: used by create and by tenant creation (joining that
   * transaction).
   */
  async insert(
    tenantId: string,
    input: NewApplication,
    createdBy: string | null,
  ): Promise<{ application: Application; key?: string }> {
    return this.db.transaction(async () => {
      const application = await this.applications.insert({
        tenantId,
        id: randomUUID(),
        name: input.name,
        type: input.type,
        permissions: input.permissions,
        rules: input.rules ?? [],
        keyVersion: 0,
        createdBy,
        modifiedBy: null,
        modifiedAt: null,
      });
      if (input.createKey === false) {
        return { application };
      }
      const { key } = await this.issueKey(application, createdBy, input.key);
      return { application: await this.find(tenantId, application.id), key };
    });
  }

  async create(principal: Principal, dto: CreateApplicationDto): Promise<ApplicationDto> {
    const { permissions, rules } = checkGrants(dto.type, dto.permissions ?? [], dto.rules ?? []);
    requireGrantable(principal, { type: dto.type, permissions, rules }, 'grant');
    const { application, key } = await this.db.transaction(async () => {
      const created = await this.insert(
        principal.tenantId,
        { name: dto.name, type: dto.type, permissions, rules, createKey: dto.create_key },
        principal.applicationId,
      );
      await this.audit.record(
        auditEvent(principal, 'application', created.application.id, 'create', 'Application created'),
      );
      const { id, type } = created.application;
      await this.events.publish(principal.tenantId, 'application.created', { id, type });
      return created;
    });
    return { ...toDto(application), ...(key !== undefined ? { key } : {}) };
  }

  async list(principal: Principal, query: ListApplicationsQueryDto): Promise<Page<ApplicationDto>> {
    const [rows, total] = await this.applications.findPage(
      principal.tenantId,
      { ids: query.id, types: query.type },
      pageOffset(query),
      query.size,
    );
    return pageOf(rows.map(toDto), total, query);
  }

  async get(principal: Principal, id: string): Promise<ApplicationDto> {
    return toDto(await this.find(principal.tenantId, id));
  }

  async update(principal: Principal, id: string, dto: UpdateApplicationDto): Promise<ApplicationDto> {
    const application = await this.findOther(principal, id, 'update');
    const { permissions, rules } = checkGrants(application.type, dto.permissions ?? [], dto.rules ?? []);
    requireGrantable(principal, { type: application.type, permissions, rules }, 'grant');
    await this.db.transaction(async () => {
      await this.applications.update(principal.tenantId, id, {
        name: dto.name,
        permissions,
        rules,
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      });
      await this.cache.changed(id);
      const what =
        JSON.stringify(application.rules) === JSON.stringify(rules) ? '' : ' (access rules changed)';
      await this.audit.record(
        auditEvent(principal, 'application', id, 'update', `Application updated${what}`),
      );
      await this.events.publish(principal.tenantId, 'application.updated', { id, type: application.type });
    });
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const target = await this.applications.find(principal.tenantId, id);
    if (target !== null && target.id !== principal.applicationId) {
      requireGrantable(principal, target, 'delete');
    }
    const affected = await this.db.transaction(async () => {
      const deleted = await this.applications.delete(principal.tenantId, id);
      await this.cache.changed(id);
      if (deleted > 0) {
        await this.audit.record(auditEvent(principal, 'application', id, 'delete', 'Application deleted'));
        await this.events.publish(principal.tenantId, 'application.deleted', { id, type: target?.type });
      }
      return deleted;
    });
    if (affected === 0) {
      throw ApiError.notFound('Application');
    }
  }

  /** Replaces every key by a new one; the old ones stop working with this commit (on every replica). */
  async regenerate(principal: Principal, id: string): Promise<ApplicationDto> {
    const application = await this.findOther(principal, id, 'regenerate the key of');
    const { type } = application;
    const key = await this.db.transaction(async () => {
      await this.keys.revoke(principal.tenantId, id);
      const issued = await this.issueKey(application, principal.applicationId);
      await this.applications.update(principal.tenantId, id, {
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      });
      await this.cache.changed(id);
      await this.audit.record(
        auditEvent(principal, 'application', id, 'regenerate', 'Application key regenerated'),
      );
      await this.events.publish(principal.tenantId, 'application.key.regenerated', { id, type });
      return issued.key;
    });
    return { ...(await this.get(principal, id)), key };
  }

  /**
   * An application of the tenant whose keys the caller may manage: its own, or one holding nothing the
   * caller does not hold (a key to a stronger application would be a key stronger than the caller).
   */
  async findManaged(principal: Principal, id: string, action: string): Promise<Application> {
    const application = await this.find(principal.tenantId, id);
    if (application.id !== principal.applicationId) {
      requireGrantable(principal, application, action);
    }
    return application;
  }

  /** Another application of the tenant that the caller holds everything of: its own is refused. */
  private async findOther(principal: Principal, id: string, action: string): Promise<Application> {
    const application = await this.find(principal.tenantId, id);
    if (application.id === principal.applicationId) {
      throw ApiError.forbidden(`An application cannot ${action} itself; use another management application.`);
    }
    requireGrantable(principal, application, action);
    return application;
  }

  /**
   * Issues a key for the application (`chosen`, or a new one) in the open transaction; the plaintext is
   * answered once and only its hash is stored.
   */
  async issueKey(
    app: { tenantId: string; id: string },
    createdBy: string | null,
    chosen?: string,
  ): Promise<{ row: ApplicationKey; key: string }> {
    const key = chosen ?? generateApiKey();
    return { row: await this.keys.issue(app.tenantId, app.id, hashSecret(key), createdBy), key };
  }

  private async find(tenantId: string, id: string): Promise<Application> {
    const application = await this.applications.find(tenantId, id);
    if (application === null) {
      throw ApiError.notFound('Application');
    }
    return application;
  }
}

export function toDto(app: Application): ApplicationDto {
  return {
    id: app.id,
    tenant_id: app.tenantId,
    name: app.name,
    type: app.type,
    permissions: app.permissions,
    rules: app.rules,
    created_by: app.createdBy,
    created_at: app.createdAt.toISOString(),
    modified_by: app.modifiedBy,
    modified_at: app.modifiedAt?.toISOString() ?? null,
  };
}
