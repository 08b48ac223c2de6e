import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Brackets, EntityManager, Repository } from 'typeorm';
import { ApplicationLookups } from '../applications/application-lookups.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Page, pageOf, pageOffset } from '../common/pagination';
import { wildcardToLike } from '../common/query';
import {
  ListReactorFormulasQueryDto,
  ReactorFormulaBodyDto,
  ReactorFormulaDto,
} from './dto/reactor-formula.dto';
import { checkFormulaBody } from './formula-rules';
import { ReactorFormula } from './reactor-formula.entity';
import { Clock } from '../common/clock';

/** Called inside the transaction that changes or deletes a formula. */
export type FormulaChangeHook = (manager: EntityManager, formulaId: string) => Promise<void>;

@Injectable()
export class ReactorFormulasService {
  private readonly changeHooks: FormulaChangeHook[] = [];

  constructor(
    @InjectRepository(ReactorFormula) private readonly formulas: Repository<ReactorFormula>,
    private readonly applications: ApplicationLookups,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** What caches the code of reactors built from a formula registers, to forget it when the formula changes. */
  onChange(hook: FormulaChangeHook): void {
    this.changeHooks.push(hook);
  }

  async create(principal: Principal, dto: ReactorFormulaBodyDto): Promise<ReactorFormulaDto> {
    requirePrivate(dto);
    const formula = this.formulas.create({
      id: randomUUID(),
      tenantId: principal.tenantId,
      ...fieldsOf(dto),
      createdBy: principal.applicationId,
      modifiedBy: null,
      modifiedAt: null,
    });
    await this.formulas.manager.transaction(async (m) => {
      await m.insert(ReactorFormula, formula);
      await this.audit.record(
        auditEvent(principal, 'reactor_formula', formula.id, 'create', 'Formula created'),
        m,
      );
    });
    return this.get(principal, formula.id);
  }

  /** Official formulas and the tenant's private ones, newest first. */
  async list(principal: Principal, query: ListReactorFormulasQueryDto): Promise<Page<ReactorFormulaDto>> {
    const builder = this.formulas
      .createQueryBuilder('f')
      .where(
        new Brackets((visible) =>
          visible
            .where('f.tenant_id = :tenantId', { tenantId: principal.tenantId })
            .orWhere('f.tenant_id IS NULL'),
        ),
      );
    if (query.name !== undefined) {
      builder.andWhere(`f.name ILIKE :name ESCAPE '\\'`, { name: wildcardToLike(query.name) });
    }
    const [rows, total] = await builder
      .orderBy('f.created_at', 'DESC')
      .addOrderBy('f.id', 'ASC')
      .skip(pageOffset(query))
      .take(query.size)
      .getManyAndCount();
    return pageOf(rows.map(toFormulaDto), total, query);
  }

  async get(principal: Principal, id: string): Promise<ReactorFormulaDto> {
    return toFormulaDto(await this.findVisible(principal.tenantId, id));
  }

  async update(principal: Principal, id: string, dto: ReactorFormulaBodyDto): Promise<ReactorFormulaDto> {
    await this.findOwn(principal.tenantId, id);
    requirePrivate(dto);
    // New code runs as the applications of the reactors built from it: as binding them, the caller must
    // hold what they hold.
    const bound = await this.formulas.query<{ application_id: string }[]>(
      `SELECT DISTINCT application_id FROM reactors
        WHERE tenant_id = $1 AND formula_id = $2 AND application_id IS NOT NULL`,
      [principal.tenantId, id],
    );
    for (const { application_id: applicationId } of bound) {
      await this.applications.requireBindable(principal, applicationId);
    }
    await this.formulas.manager.transaction(async (m) => {
      await m.update(
        ReactorFormula,
        { tenantId: principal.tenantId, id },
        { ...fieldsOf(dto), modifiedBy: principal.applicationId, modifiedAt: this.clock.now() },
      );
      await this.audit.record(auditEvent(principal, 'reactor_formula', id, 'update', 'Formula updated'), m);
      await this.changedIn(m, id);
    });
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.findOwn(principal.tenantId, id);
    const [{ count }] = await this.formulas.query<{ count: string }[]>(
      'SELECT count(*) AS count FROM reactors WHERE tenant_id = $1 AND formula_id = $2',
      [principal.tenantId, id],
    );
    if (Number(count) > 0) {
      throw ApiError.conflict(`The formula is used by ${count} reactor(s): delete them first.`);
    }
    await this.formulas.manager.transaction(async (m) => {
      await m.delete(ReactorFormula, { tenantId: principal.tenantId, id });
      await this.audit.record(auditEvent(principal, 'reactor_formula', id, 'delete', 'Formula deleted'), m);
      await this.changedIn(m, id);
    });
  }

  private async changedIn(manager: EntityManager, id: string): Promise<void> {
    for (const hook of this.changeHooks) {
      await hook(manager, id);
    }
  }

  /** An official formula or one of the tenant's: what reactors may be built from. */
  async findVisible(tenantId: string, id: string): Promise<ReactorFormula> {
    const formula = await this.formulas.findOne({ where: { id } });
    if (formula === null || (formula.tenantId !== null && formula.tenantId !== tenantId)) {
      throw ApiError.notFound('Reactor formula');
    }
    return formula;
  }

  /** Official formulas are the operator's: tenants may read them but not change them. */
  private async findOwn(tenantId: string, id: string): Promise<ReactorFormula> {
    const formula = await this.findVisible(tenantId, id);
    if (formula.tenantId === null) {
      throw ApiError.forbidden('Official reactor formulas are read-only.');
    }
    return formula;
  }

  /** Operator path (CLI, seed): an official formula, validated like a tenant's. */
  async createOfficial(dto: ReactorFormulaBodyDto): Promise<ReactorFormulaDto> {
    if (dto.type !== 'official') {
      throw ApiError.field('type', 'must be official');
    }
    const formula = this.formulas.create({
      id: randomUUID(),
      tenantId: null,
      ...fieldsOf(dto),
      createdBy: null,
      modifiedBy: null,
      modifiedAt: null,
    });
    await this.formulas.insert(formula);
    return toFormulaDto(await this.formulas.findOneByOrFail({ id: formula.id }));
  }
}

function requirePrivate(dto: ReactorFormulaBodyDto): void {
  if (dto.type !== 'private') {
    throw new ApiError(
      403,
      'Tenants create private formulas only; official formulas come from the operator.',
    );
  }
}

function fieldsOf(dto: ReactorFormulaBodyDto): Partial<ReactorFormula> {
  const { configuration, requestParameters } = checkFormulaBody(dto);
  return {
    name: dto.name,
    description: dto.description ?? null,
    type: dto.type,
    status: dto.status ?? 'verified',
    icon: dto.icon ?? null,
    code: dto.code,
    configuration,
    requestParameters,
  };
}

export function toFormulaDto(f: ReactorFormula): ReactorFormulaDto {
  return {
    id: f.id,
    name: f.name,
    description: f.description,
    type: f.type,
    status: f.status,
    icon: f.icon,
    code: f.code,
    configuration: f.configuration,
    request_parameters: f.requestParameters,
    created_by: f.createdBy,
    created_at: f.createdAt.toISOString(),
    modified_by: f.modifiedBy,
    modified_at: f.modifiedAt?.toISOString() ?? null,
  };
}
