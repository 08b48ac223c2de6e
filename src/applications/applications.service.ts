import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { In, Repository } from 'typeorm';
import { AccessRule } from '../access/access-rules';
import { isPermission, Permission, permissionAllowedFor, TOKEN_PERMISSIONS } from '../access/permissions';
import { Grants, ungrantable } from '../access/grants';
import { Principal } from '../access/principal';
import { ApiError, FieldErrors } from '../common/api-error';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { generateApiKey, hashSecret } from '../crypto';
import { normalizeRuleContainer } from '../access/containers';
import { ApplicationCache } from './application-cache';
import { Application } from './application.entity';
import { ApplicationType } from '../access/application-type';
import {
  AccessRuleDto,
  ApplicationDto,
  CreateApplicationDto,
  ListApplicationsQueryDto,
  UpdateApplicationDto,
} from './dto/application.dto';
import { Clock } from '../common/clock';
import { Transactions } from '../database/transactions';

export interface NewApplication {
  name: string;
  type: ApplicationType;
  permissions: Permission[];
  rules?: AccessRule[];
  /** A key chosen by the operator (bootstrap); generated when absent. */
  key?: string;
}

@Injectable()
export class ApplicationsService {
  constructor(
    @InjectRepository(Application) private readonly applications: Repository<Application>,
    private readonly cache: ApplicationCache,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
  ) {}

  /** Resolves an API key to its application; null when unknown (or regenerated). */
  async authenticate(key: string): Promise<Principal | null> {
    const keyHash = hashSecret(key);
    const cached = this.cache.get(keyHash);
    if (cached !== undefined) {
      return cached;
    }
    const app = await this.applications.findOne({ where: { keyHash } });
    if (app === null) {
      return null;
    }
    const principal = toPrincipal(app);
    this.cache.set(keyHash, principal);
    return principal;
  }

  /**
   * The stored application as a principal, without its key: how a reactor's or a proxy's application acts.
   * Cached and evicted exactly like `authenticate` (the cache evicts by application id). Null when the
   * application is not the tenant's.
   */
  async principalFor(tenantId: string, applicationId: string): Promise<Principal | null> {
    const cacheKey = `app:${tenantId}:${applicationId}`;
    const cached = this.cache.get(cacheKey);
    if (cached !== undefined) {
      return cached;
    }
    const app = await this.applications.findOne({ where: { tenantId, id: applicationId } });
    if (app === null) {
      return null;
    }
    const principal = toPrincipal(app);
    this.cache.set(cacheKey, principal);
    return principal;
  }

  /**
   * Inserts an application and returns its key once: used by create and by tenant creation (joining that
   * transaction through Transactions).
   */
  async insert(
    tenantId: string,
    input: NewApplication,
    createdBy: string | null,
  ): Promise<{ application: Application; key: string }> {
    const manager = this.transactions.manager;
    const key = input.key ?? generateApiKey();
    const application = manager.create(Application, {
      tenantId,
      id: randomUUID(),
      name: input.name,
      type: input.type,
      permissions: input.permissions,
      rules: input.rules ?? [],
      keyHash: hashSecret(key),
      createdBy,
      modifiedBy: null,
      modifiedAt: null,
    });
    await manager.insert(Application, application);
    return { application: await manager.findOneByOrFail(Application, { tenantId, id: application.id }), key };
  }

  async create(principal: Principal, dto: CreateApplicationDto): Promise<ApplicationDto> {
    const { permissions, rules } = checkGrants(dto.type, dto.permissions ?? [], dto.rules ?? []);
    requireGrantable(principal, { type: dto.type, permissions, rules }, 'grant');
    const { application, key } = await this.insert(
      principal.tenantId,
      { name: dto.name, type: dto.type, permissions, rules },
      principal.applicationId,
    );
    return { ...toDto(application), key };
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
      return result.affected ?? 0;
    });
    if (affected === 0) {
      throw ApiError.notFound('Application');
    }
  }

  /** Issues a new key; the old one stops working with this commit (evicted from every replica's cache). */
  async regenerate(principal: Principal, id: string): Promise<ApplicationDto> {
    await this.findOther(principal, id, 'regenerate the key of');
    const key = generateApiKey();
    await this.applications.manager.transaction(async (manager) => {
      await manager.update(
        Application,
        { tenantId: principal.tenantId, id },
        { keyHash: hashSecret(key), modifiedBy: principal.applicationId, modifiedAt: this.clock.now() },
      );
      await this.cache.changed(manager, id);
    });
    return { ...(await this.get(principal, id)), key };
  }

  /** An application of the tenant, or null; reactors and proxies then check the type they accept. */
  async findForTenant(tenantId: string, id: string): Promise<Application | null> {
    return this.applications.findOne({ where: { tenantId, id } });
  }

  async findManyForTenant(tenantId: string, ids: string[]): Promise<Application[]> {
    return this.applications.find({ where: { tenantId, id: In(ids) } });
  }

  /**
   * The application a reactor or proxy of the caller will act as (null for none): a public or private
   * application of the tenant holding nothing the caller does not hold itself, since binding it hands its
   * permissions to code the caller writes.
   */
  async requireBindable(principal: Principal, applicationId: string | null): Promise<string | null> {
    if (applicationId === null) {
      return null;
    }
    const application = await this.findForTenant(principal.tenantId, applicationId);
    if (application === null) {
      throw ApiError.field('application.id', 'is not an application of this tenant');
    }
    if (application.type !== 'public' && application.type !== 'private') {
      throw ApiError.field('application.id', 'must be a public or private application');
    }
    requireGrantable(principal, application, 'bind');
    return application.id;
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

/**
 * A caller grants, binds, updates, regenerates or deletes only what it holds itself: every permission, and
 * every access rule covered by one of its own (container at or under it, transform showing no more, the
 * permission). Otherwise a key with `application:create` could mint a key stronger than itself.
 */
function requireGrantable(principal: Principal, wanted: Grants, action: string): void {
  const missing = ungrantable(principal, wanted);
  if (missing.length > 0) {
    const what = action === 'grant' ? 'grant' : `${action} an application holding`;
    throw ApiError.forbidden(
      `The application cannot ${what} what it does not hold itself: ${missing.slice(0, 10).join('; ')}.`,
    );
  }
}

/**
 * The permissions (and the rules' permissions) must exist and be allowed for the application type; a
 * management application's rules hold the token access it may delegate.
 */
function checkGrants(
  type: ApplicationType,
  permissions: string[],
  rules: AccessRuleDto[],
): { permissions: Permission[]; rules: AccessRule[] } {
  const errors: FieldErrors = {};
  const add = (path: string, message: string): void => {
    (errors[path] ??= []).push(message);
  };
  const checkList = (list: string[], path: string, tokenOnly: boolean): Permission[] => {
    list.forEach((p, i) => {
      if (!isPermission(p)) {
        add(`${path}[${i}]`, `unknown permission`);
      } else if (tokenOnly && type === 'management' && TOKEN_PERMISSIONS.includes(p)) {
        return;
      } else if (!permissionAllowedFor(p, type)) {
        add(`${path}[${i}]`, `${p} cannot be granted to a ${type} application`);
      } else if (tokenOnly && !TOKEN_PERMISSIONS.includes(p)) {
        add(`${path}[${i}]`, `access rules grant token permissions only`);
      }
    });
    return [...new Set(list.filter(isPermission))];
  };
  const checkedPermissions = checkList(permissions, 'permissions', false);
  const checkedRules = rules.map((rule, i): AccessRule => {
    const container = normalizeRuleContainer(rule.container);
    if (container === null) {
      add(`rules[${i}].container`, 'must be / or a container path such as /pci/');
    }
    if (rule.permissions.length === 0) {
      add(`rules[${i}].permissions`, 'must grant at least one permission');
    }
    return {
      description: rule.description ?? null,
      priority: rule.priority,
      container: container ?? rule.container,
      transform: rule.transform,
      permissions: checkList(rule.permissions, `rules[${i}].permissions`, true),
    };
  });
  if (Object.keys(errors).length > 0) {
    throw ApiError.validation(errors);
  }
  return { permissions: checkedPermissions, rules: checkedRules.sort((a, b) => a.priority - b.priority) };
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

function toPrincipal(app: Application): Principal {
  const granted = new Set<Permission>(app.permissions.filter(isPermission));
  // A management application's rules say what it may delegate, never what it may do itself.
  for (const rule of app.type === 'management' ? [] : app.rules) {
    rule.permissions.filter(isPermission).forEach((p) => granted.add(p));
  }
  return {
    tenantId: app.tenantId,
    applicationId: app.id,
    applicationType: app.type,
    permissions: granted,
    rules: app.rules,
  };
}
