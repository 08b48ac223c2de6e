import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { In, Repository } from 'typeorm';
import { AccessRule } from '../access/access-rules';
import { Permission } from '../access/permissions';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { ApplicationCache } from './application-cache';
import { Application } from './application.entity';
import { ApplicationKeyStore } from './application-key.store';
import { checkGrants, requireGrantable } from './application-grants';
import { ApplicationType } from '../access/application-type';
import {
  ApplicationDto,
  CreateApplicationDto,
  ListApplicationsQueryDto,
  UpdateApplicationDto,
} from './dto/application.dto';
import { Clock } from '../common/clock';
import { Transactions } from '../database/transactions';
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
    @InjectRepository(Application) private readonly applications: Repository<Application>,
    private readonly cache: ApplicationCache,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly keys: ApplicationKeyStore,
  ) {}

  /**
   * Inserts an application and returns its key once: used by create and by tenant creation (joining that
   * transaction through Transactions).
   */
  async insert(
    tenantId: string,
    input: NewApplication,
    createdBy: string | null,
  ): Promise<{ application: Application; key?: string }> {
    return this.transactions.run(async () => {
      const manager = this.transactions.manager;
      const application = manager.create(Application, {
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
      await manager.insert(Application, application);
      const issued =
        input.createKey === false
          ? undefined
          : await this.keys.issue(manager, application, createdBy, input.key);
      const stored = await manager.findOneByOrFail(Application, { tenantId, id: application.id });
      return { application: stored, key: issued?.key };
    });
  }

  async create(principal: Principal, dto: CreateApplicationDto): Promise<ApplicationDto> {
    const { permissions, rules } = checkGrants(dto.type, dto.permissions ?? [], dto.rules ?? []);
    requireGrantable(principal, { type: dto.type, permissions, rules }, 'grant');
    const { application, key } = await this.transactions.run(async () => {
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
    const where = {
      tenantId: principal.tenantId,
      ...(query.id !== undefined ? { id: In(query.id) } : {}),
      ...(query.type !== undefined ? { type: In(query.type) } : {}),
    };
    const [rows, total] = await this.applications.findAndCount({
      where,
      order: { createdAt: 'DESC', id: 'ASC' },
      skip: pageOffset(query),
      take: query.size,
    });
    return pageOf(rows.map(toDto), total, query);
  }

  async get(principal: Principal, id: string): Promise<ApplicationDto> {
    return toDto(await this.find(principal.tenantId, id));
  }

  async update(principal: Principal, id: string, dto: UpdateApplicationDto): Promise<ApplicationDto> {
    const application = await this.findOther(principal, id, 'update');
    const { permissions, rules } = checkGrants(application.type, dto.permissions ?? [], dto.rules ?? []);
    requireGrantable(principal, { type: application.type, permissions, rules }, 'grant');
    await this.applications.manager.transaction(async (manager) => {
      await manager.update(
        Application,
        { tenantId: principal.tenantId, id },
        {
          name: dto.name,
          permissions,
          rules,
          modifiedBy: principal.applicationId,
          modifiedAt: this.clock.now(),
        },
      );
      await this.cache.changed(manager, id);
      const what =
        JSON.stringify(application.rules) === JSON.stringify(rules) ? '' : ' (access rules changed)';
      await this.audit.record(
        auditEvent(principal, 'application', id, 'update', `Application updated${what}`),
        manager,
      );
      await this.events.publish(
        principal.tenantId,
        'application.updated',
        { id, type: application.type },
        manager,
      );
    });
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const target = await this.applications.findOne({ where: { tenantId: principal.tenantId, id } });
    if (target !== null && target.id !== principal.applicationId) {
      requireGrantable(principal, target, 'delete');
    }
    const affected = await this.applications.manager.transaction(async (manager) => {
      const result = await manager.delete(Application, { tenantId: principal.tenantId, id });
      await this.cache.changed(manager, id);
      if ((result.affected ?? 0) > 0) {
        await this.audit.record(
          auditEvent(principal, 'application', id, 'delete', 'Application deleted'),
          manager,
        );
        await this.events.publish(
          principal.tenantId,
          'application.deleted',
          { id, type: target?.type },
          manager,
        );
      }
      return result.affected ?? 0;
    });
    if (affected === 0) {
      throw ApiError.notFound('Application');
    }
  }

  /** Replaces every key by a new one; the old ones stop working with this commit (on every replica). */
  async regenerate(principal: Principal, id: string): Promise<ApplicationDto> {
    const application = await this.findOther(principal, id, 'regenerate the key of');
    const { type } = application;
    const key = await this.applications.manager.transaction(async (manager) => {
      await this.keys.revoke(manager, principal.tenantId, id);
      const issued = await this.keys.issue(manager, application, principal.applicationId);
      await manager.update(
        Application,
        { tenantId: principal.tenantId, id },
        { modifiedBy: principal.applicationId, modifiedAt: this.clock.now() },
      );
      await this.cache.changed(manager, id);
      await this.audit.record(
        auditEvent(principal, 'application', id, 'regenerate', 'Application key regenerated'),
        manager,
      );
      await this.events.publish(principal.tenantId, 'application.key.regenerated', { id, type }, manager);
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

  private async find(tenantId: string, id: string): Promise<Application> {
    const application = await this.applications.findOne({ where: { tenantId, id } });
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
