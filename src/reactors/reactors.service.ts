import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Repository } from 'typeorm';
import { Application } from '../applications/application.entity';
import { ApplicationsService } from '../applications/applications.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { findIdAndNamePage, Page, pageOf } from '../common/pagination';
import { TenantCipher } from '../crypto/tenant-cipher.service';
import { ReactorFormula } from '../reactor-formulas/reactor-formula.entity';
import { ReactorFormulasService, toFormulaDto } from '../reactor-formulas/reactor-formulas.service';
import { CreateReactorDto, ListReactorsQueryDto, ReactorDto, UpdateReactorDto } from './dto/reactor.dto';
import { checkReactorConfiguration } from './reactor-configuration';
import { Reactor } from './reactor.entity';
import { Clock } from '../common/clock';

/** What the react path needs of a reactor: its formula and its decrypted configuration. */
export interface LoadedReactor {
  reactor: Reactor;
  formula: ReactorFormula;
  configuration: Record<string, unknown>;
}

const SEAL_KIND = 'reactor-configuration';

@Injectable()
export class ReactorsService {
  constructor(
    @InjectRepository(Reactor) private readonly reactors: Repository<Reactor>,
    private readonly formulas: ReactorFormulasService,
    private readonly applications: ApplicationsService,
    private readonly cipher: TenantCipher,
    private readonly clock: Clock,
  ) {}

  async create(principal: Principal, dto: CreateReactorDto): Promise<ReactorDto> {
    const formula = await this.formulaFor(principal.tenantId, dto.formula.id);
    const configuration = checkReactorConfiguration(formula.configuration, dto.configuration);
    const applicationId = await this.applications.requireBindable(principal, dto.application?.id ?? null);
    const id = randomUUID();
    await this.reactors.insert({
      tenantId: principal.tenantId,
      id,
      name: dto.name,
      formulaId: formula.id,
      applicationId,
      configuration: await this.cipher.sealJson(SEAL_KIND, principal.tenantId, id, configuration),
      createdBy: principal.applicationId,
      modifiedBy: null,
      modifiedAt: null,
    });
    return this.get(principal, id);
  }

  async list(principal: Principal, query: ListReactorsQueryDto): Promise<Page<ReactorDto>> {
    const [rows, total] = await findIdAndNamePage(this.reactors, principal.tenantId, query);
    return pageOf(await this.toDtos(principal.tenantId, rows), total, query);
  }

  async get(principal: Principal, id: string): Promise<ReactorDto> {
    const [dto] = await this.toDtos(principal.tenantId, [await this.find(principal.tenantId, id)]);
    return dto;
  }

  async update(principal: Principal, id: string, dto: UpdateReactorDto): Promise<ReactorDto> {
    const reactor = await this.find(principal.tenantId, id);
    if (dto.formula !== undefined && dto.formula.id !== reactor.formulaId) {
      throw ApiError.field('formula.id', 'cannot change: create a new reactor for another formula');
    }
    const formula = await this.formulas.findVisible(principal.tenantId, reactor.formulaId);
    const configuration = checkReactorConfiguration(formula.configuration, dto.configuration);
    const applicationId = await this.applications.requireBindable(principal, dto.application?.id ?? null);
    await this.reactors.update(
      { tenantId: principal.tenantId, id },
      {
        name: dto.name,
        applicationId,
        configuration: await this.cipher.sealJson(SEAL_KIND, principal.tenantId, id, configuration),
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      },
    );
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    const result = await this.reactors.delete({ tenantId: principal.tenantId, id });
    if ((result.affected ?? 0) === 0) {
      throw ApiError.notFound('Reactor');
    }
  }

  /** The reactor, its formula and its configuration in clear, for an invocation. */
  async load(tenantId: string, id: string): Promise<LoadedReactor> {
    const reactor = await this.find(tenantId, id);
    const formula = await this.formulas.findVisible(tenantId, reactor.formulaId);
    return { reactor, formula, configuration: await this.configurationOf(reactor) };
  }

  private async find(tenantId: string, id: string): Promise<Reactor> {
    const reactor = await this.reactors.findOne({ where: { tenantId, id } });
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
    const formulaIds = [...new Set(rows.map((r) => r.formulaId))];
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
        return {
          id: r.id,
          tenant_id: r.tenantId,
          name: r.name,
          formula: toFormulaDto(formulas.get(r.formulaId) as ReactorFormula),
          configuration: await this.configurationOf(r),
          application: app !== undefined ? { id: app.id, name: app.name, type: app.type } : null,
          created_by: r.createdBy,
          created_at: r.createdAt.toISOString(),
          modified_by: r.modifiedBy,
          modified_at: r.modifiedAt?.toISOString() ?? null,
        };
      }),
    );
  }
}
