import { AuditService } from '../audit/audit.service';
import { auditEvent } from '../audit/audit-event';
import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { ApplicationLookups } from '../applications/application-lookups.service';
import { Principal } from '../access/principal';
import { ApiError } from '../common/api-error';
import { Page, pageOf } from '../common/pagination';
import { Database } from '../database/database.service';
import {
  ListReactorFormulasQueryDto,
  ReactorFormulaBodyDto,
  ReactorFormulaDto,
} from './dto/reactor-formula.dto';
import { checkFormulaBody } from './formula-rules';
import { ReactorFormula } from './reactor-formula.entity';
import { ReactorFormulasRepository } from './reactor-formulas.repository';
import { Clock } from '../common/clock';

/** Called inside the transaction that changes or deletes a formula. */
export type FormulaChangeHook = (formulaId: string) => Promise<void>;

@Injectable()
export class ReactorFormulasService {
  private readonly changeHooks: FormulaChangeHook[] = [];

  constructor(
    private readonly formulas: ReactorFormulasRepository,
    private readonly db: Database,
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
    const formula = Object.assign(new ReactorFormula(), {
      id: randomUUID(),
      tenantId: principal.tenantId,
      ...fieldsOf(dto),
      createdBy: principal.applicationId,
      modifiedBy: null,
      modifiedAt: null,
    });
    await this.db.transaction(async () => {
      await this.formulas.insert(formula);
      await this.audit.record(
        auditEvent(principal, 'reactor_formula', formula.id, 'create', 'Formula created'),
      );
    });
    return this.get(principal, formula.id);
  }

  /** Official formulas and the tenant's private ones, newest first. */
  async list(principal: Principal, query: ListReactorFormulasQueryDto): Promise<Page<ReactorFormulaDto>> {
    const [rows, total] = await this.formulas.findVisiblePage(principal.tenantId, query);
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
    for (const applicationId of await this.formulas.boundApplicationIds(principal.tenantId, id)) {
      await this.applications.requireBindable(principal, applicationId);
    }
    await this.db.transaction(async () => {
      await this.formulas.update(principal.tenantId, id, {
        ...fieldsOf(dto),
        modifiedBy: principal.applicationId,
        modifiedAt: this.clock.now(),
      });
      await this.audit.record(auditEvent(principal, 'reactor_formula', id, 'update', 'Formula updated'));
      await this.changed(id);
    });
    return this.get(principal, id);
  }

  async delete(principal: Principal, id: string): Promise<void> {
    await this.findOwn(principal.tenantId, id);
    const count = await this.formulas.countReactorsUsing(principal.tenantId, id);
    if (count > 0) {
      throw ApiError.conflict(`The formula is used by ${count} reactor(s): delete them first.`);
    }
    await this.db.transaction(async () => {
      await this.formulas.delete(principal.tenantId, id);
      await this.audit.record(auditEvent(principal, 'reactor_formula', id, 'delete', 'Formula deleted'));
      await this.changed(id);
    });
  }

  private async changed(id: string): Promise<void> {
    for (const hook of this.changeHooks) {
      await hook(id);
    }
  }

  /** An official formula or one of the tenant's: what reactors may be built from. */
  async findVisible(tenantId: string, id: string): Promise<ReactorFormula> {
    const formula = await this.formulas.findVisible(tenantId, id);
    if (formula === null) {
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
    const formula = Object.assign(new ReactorFormula(), {
      id: randomUUID(),
      tenantId: null,
      ...fieldsOf(dto),
      createdBy: null,
      modifiedBy: null,
      modifiedAt: null,
    });
    await this.formulas.insert(formula);
    const created = await this.formulas.findOfficial(formula.id);
    if (created === null) {
      throw new Error(`official formula ${formula.id} not found after its insert`);
    }
    return toFormulaDto(created);
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
