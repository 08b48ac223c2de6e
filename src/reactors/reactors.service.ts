import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Inject, Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { Events } from '../events/events';
import { Application } from '../applications/application.entity';
import { ApplicationLookups } from '../applications/application-lookups.service';
import { toDto as toApplicationDto } from '../applications/applications.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { mergePatch } from '../common/merge-patch';
import { Page, pageOf } from '../common/pagination';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Database } from '../database/database.service';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { ReactorFormula } from '../reactor-formulas/reactor-formula.entity';
import { ReactorFormulasService, toFormulaDto } from '../reactor-formulas/reactor-formulas.service';
import { ListReactorsQueryDto, ReactorBodyDto, ReactorDto } from './dto/reactor.dto';
import { checkReactorConfiguration } from './reactor-configuration';
import { checkCodeReactor, ReactorRuntime } from './reactor-rules';
import { LoadedReactor } from './load-reactor';
import { ReactorCache } from './reactor-cache';
import { Reactor } from './reactor.entity';
import { ReactorsRepository } from './reactors.repository';

/** The columns a create, replace or patch writes. */
interface ReactorFields {
  name: string;
  formulaId: string | null;
  code: string | null;
  runtime: ReactorRuntime | null;
  applicationId: string | null;
  configuration: Record<string, unknown>;
}

const SEAL_KIND = 'reactor-configuration';

@Injectable()
export class ReactorsService {
  constructor(
    private readonly reactors: ReactorsRepository,
    private readonly db: Database,
    private readonly formulas: ReactorFormulasService,
    private readonly applications: ApplicationLookups,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly audit: AuditService,
    private readonly events: Events,
    private readonly cache: ReactorCache,
  ) {}

  async create(principal: Principal, dto: ReactorBodyDto): Promise<ReactorDto> {
    const fields = await this.check(principal, dto, null);
    const id = randomUUID();
    const sealed = await this.cipher.sealJson(SEAL_KIND, principal.tenantId, id, fields.configuration);
    await this.db.transaction(async () => {
      await this.reactors.insert({
        tenantId: principal.tenantId,
        id,
        ...fields,
        configuration: sealed,
        createdBy: principal.applicationId,
        modifiedBy: null,
        modifiedAt: null,
      });
      await this.audit.record(auditEvent(principal, 'reactor', id, 'create', 'Reactor created'));
      await this.events.publish(principal.tenantId, 'reactor.created', { id });
    });
    return this.get(principal, id);
  }

  async list(principal: Principal, query: ListReactorsQueryDto): Promise<Page<ReactorDto>> {
    const [rows, total] = await this.reactors.page(principal.tenantId, query);
    return pageOf(await this.toDtos(principal.tenantId, rows), total, query);
  }

  async get(principal: Principal, id: string): Promise<ReactorDto> {
    const [dto] = await this.toDtos(principal.tenantId, [await this.find(principal.tenantId, id)]);
    return dto;
  }

  /** PUT: the kind (formula or code) and the formula are fixed at creation. */
  async update(principal: Principal, id: string, dto: ReactorBodyDto): Promise<ReactorDto> {
    const reactor = await this.find(principal.tenantId, id);
    return this.save(principal, reactor, await this.check(principal, dto, reactor));
  }

  /** PATCH (RFC 7386) over the reactor as a replace body: configuration and runtime merge. */
  async patch(principal: Principal, id: string, patch: Record<string, unknown>): Promise<ReactorDto> {
    const reactor = await this.find(principal.tenantId, id);
    const current: Record<string, unknown> = {
      name: reactor.name,
      configuration: await this.configurationOf(reactor),
      ...(reactor.applicationId !== null ? { application: { id: reactor.applicationId } } : {}),
      ...(reactor.code !== null ? { code: reactor.code } : {}),
      ...(reactor.runtime !== null ? { runtime: reactor.runtime } : {}),
    };
    const merged = mergePatch(current, patch) as ReactorBodyDto;
    return this.save(principal, reactor, await this.check(principal, merged, reactor));
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.db.transaction(async () => {
      if (!(await this.reactors.delete(principal.tenantId, id))) {
        throw ApiError.notFound('Reactor');
      }
      await this.audit.record(auditEvent(principal, 'reactor', id, 'delete', 'Reactor deleted'));
      await this.events.publish(principal.tenantId, 'reactor.deleted', { id });
      await this.cache.changed(id);
    });
  }

  /** The reactor, the code it runs and its configuration in clear, for an invocation (ReactorCache). */
  async load(tenantId: string, id: string): Promise<LoadedReactor> {
    const cached = this.cache.get(tenantId, id);
    if (cached !== undefined) {
      return cached;
    }
    const runnable = await this.loadRunnable(tenantId, id);
    this.cache.set(tenantId, id, runnable);
    return runnable;
  }

  private async loadRunnable(tenantId: string, id: string): Promise<LoadedReactor> {
    const loaded = await this.reactors.findRunnable(tenantId, id);
    if (loaded === null) {
      throw ApiError.notFound('Reactor');
    }
    const { reactor, formula } = loaded;
    const configuration = await this.configurationOf(reactor);
    if (reactor.code !== null) {
      const timeout = reactor.runtime?.timeout ?? null;
      return {
        reactor,
        code: reactor.code,
        parameters: null,
        configuration,
        timeoutMs: timeout === null ? undefined : timeout * 1000,
      };
    }
    if (formula === null) {
      throw ApiError.notFound('Reactor formula');
    }
    return {
      reactor,
      code: formula.code,
      parameters: formula.requestParameters,
      configuration,
      timeoutMs: undefined,
    };
  }

  /** The fields to store, after every rule of the kind of reactor (`existing` null: a create). */
  private async check(
    principal: Principal,
    dto: ReactorBodyDto,
    existing: Reactor | null,
  ): Promise<ReactorFields> {
    if (typeof dto.name !== 'string') {
      throw ApiError.field('name', 'is required');
    }
    if (existing === null && dto.code !== undefined && dto.formula !== undefined) {
      throw ApiError.field(
        'code',
        'cannot be given with formula.id: a reactor runs a formula or its own code',
      );
    }
    if (existing === null && dto.code === undefined && dto.formula === undefined) {
      throw ApiError.validation({
        formula: ['is required for a formula reactor'],
        code: ['is required for a code reactor'],
      });
    }
    const isCode = existing === null ? dto.code !== undefined : existing.code !== null;
    const fields = isCode
      ? this.codeFields(dto)
      : await this.formulaFields(principal.tenantId, dto, existing);
    const applicationId = await this.applications.requireBindable(principal, dto.application?.id ?? null);
    return { name: dto.name, applicationId, ...fields };
  }

  private codeFields(dto: ReactorBodyDto): Omit<ReactorFields, 'name' | 'applicationId'> {
    if (dto.formula !== undefined) {
      throw ApiError.field('formula.id', 'cannot be set on a code reactor: create a formula reactor instead');
    }
    const maxTimeoutSeconds = Math.max(1, Math.floor(this.config.sandboxTimeoutMs / 1000));
    const checked = checkCodeReactor(dto, maxTimeoutSeconds);
    return { formulaId: null, ...checked };
  }

  private async formulaFields(
    tenantId: string,
    dto: ReactorBodyDto,
    existing: Reactor | null,
  ): Promise<Omit<ReactorFields, 'name' | 'applicationId'>> {
    if (dto.code !== undefined) {
      throw ApiError.field('code', "cannot be set on a formula reactor (it runs its formula's code)");
    }
    if (dto.runtime !== undefined) {
      throw ApiError.field('runtime', 'applies to code reactors only');
    }
    let formula: ReactorFormula;
    if (existing === null) {
      formula = await this.formulaFor(tenantId, (dto.formula as { id: string }).id);
    } else {
      if (dto.formula !== undefined && dto.formula.id !== existing.formulaId) {
        throw ApiError.field('formula.id', 'cannot change: create a new reactor for another formula');
      }
      formula = await this.formulas.findVisible(tenantId, existing.formulaId as string);
    }
    if (dto.configuration === undefined) {
      throw ApiError.field('configuration', 'is required for a formula reactor');
    }
    const configuration = checkReactorConfiguration(formula.configuration, dto.configuration);
    return { formulaId: formula.id, code: null, runtime: null, configuration };
  }

  private async save(principal: Principal, reactor: Reactor, fields: ReactorFields): Promise<ReactorDto> {
    const { tenantId, id } = reactor;
    const sealed = await this.cipher.sealJson(SEAL_KIND, tenantId, id, fields.configuration);
    await this.db.transaction(async () => {
      await this.reactors.update(tenantId, id, {
        ...fields,
        configuration: sealed,
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      });
      await this.audit.record(auditEvent(principal, 'reactor', id, 'update', 'Reactor updated'));
      await this.events.publish(tenantId, 'reactor.updated', { id });
      await this.cache.changed(id);
    });
    return this.get(principal, id);
  }

  private async find(tenantId: string, id: string): Promise<Reactor> {
    const reactor = await this.reactors.find(tenantId, id);
    if (reactor === null) {
      throw ApiError.notFound('Reactor');
    }
    return reactor;
  }

  /** An unknown formula in a create body is a bad field, not a missing resource of the route. */
  private async formulaFor(tenantId: string, formulaId: string): Promise<ReactorFormula> {
    try {
      return await this.formulas.findVisible(tenantId, formulaId);
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) {
        throw ApiError.field('formula.id', 'is not a reactor formula of this tenant');
      }
      throw err;
    }
  }

  private async configurationOf(reactor: Reactor): Promise<Record<string, unknown>> {
    return (await this.cipher.openJson(
      SEAL_KIND,
      reactor.tenantId,
      reactor.id,
      reactor.configuration,
    )) as Record<string, unknown>;
  }

  private async toDtos(tenantId: string, rows: Reactor[]): Promise<ReactorDto[]> {
    const formulaIds = [...new Set(rows.map((r) => r.formulaId).filter((id): id is string => id !== null))];
    const formulas = new Map<string, ReactorFormula>();
    for (const id of formulaIds) {
      formulas.set(id, await this.formulas.findVisible(tenantId, id));
    }
    const appIds = [...new Set(rows.map((r) => r.applicationId).filter((id): id is string => id !== null))];
    const apps = new Map<string, Application>();
    if (appIds.length > 0) {
      for (const app of await this.applications.findManyForTenant(tenantId, appIds)) {
        apps.set(app.id, app);
      }
    }
    return Promise.all(
      rows.map(async (r): Promise<ReactorDto> => {
        const app = r.applicationId !== null ? apps.get(r.applicationId) : undefined;
        const formula = r.formulaId !== null ? formulas.get(r.formulaId) : undefined;
        return {
          id: r.id,
          tenant_id: r.tenantId,
          name: r.name,
          state: 'active',
          formula: formula !== undefined ? toFormulaDto(formula) : null,
          code: r.code,
          runtime: r.runtime,
          configuration: await this.configurationOf(r),
          application: app !== undefined ? toApplicationDto(app) : null,
          created_by: r.createdBy,
          created_at: r.createdAt.toISOString(),
          modified_by: r.modifiedBy,
          modified_at: r.modifiedAt?.toISOString() ?? null,
        };
      }),
    );
  }
}
