import { Injectable } from '@nestjs/common';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { IdAndNameQueryDto } from '../common/pagination';
import { findIdAndNamePage } from '../database/id-and-name-page';
import { Database } from '../database/database.service';
import { entityColumns } from '../database/entity-columns';
import type { FormulaRequestParameter } from '../reactor-formulas/reactor-formula.entity';
import type { RunnableFormula } from './load-reactor';
import { Reactor } from './reactor.entity';

type LoadedRow = Reactor & {
  formulaCode: string | null;
  formulaParameters: FormulaRequestParameter[] | null;
};

/** Reactors, each of one tenant; every method takes the tenant id first. */
@Injectable()
export class ReactorsRepository {
  private loadText: string | undefined;

  constructor(private readonly db: Database) {}

  async insert(row: QueryDeepPartialEntity<Reactor>): Promise<void> {
    await this.db.repository(Reactor).insert(row);
  }

  /** One page of the tenant's reactors, newest first, and the count of all that match. */
  page(tenantId: string, query: IdAndNameQueryDto): Promise<[Reactor[], number]> {
    return findIdAndNamePage(this.db.repository(Reactor), tenantId, query);
  }

  find(tenantId: string, id: string): Promise<Reactor | null> {
    return this.db.repository(Reactor).findOne({ where: { tenantId, id } });
  }

  async update(tenantId: string, id: string, fields: QueryDeepPartialEntity<Reactor>): Promise<void> {
    await this.db.repository(Reactor).update({ tenantId, id }, fields);
  }

  /** False when the tenant has no such reactor. */
  async delete(tenantId: string, id: string): Promise<boolean> {
    const result = await this.db.repository(Reactor).delete({ tenantId, id });
    return (result.affected ?? 0) > 0;
  }

  /**
   * A reactor and the formula it runs, in one prepared statement: an invocation reads both on every call.
   * The formula counts only when the reactor's tenant may see it, official or its own: the rule of
   * ReactorFormulasService.findVisible, here in the join. Null when the tenant has no such reactor;
   * `formula` null for a code reactor or a formula not visible.
   */
  async findRunnable(
    tenantId: string,
    id: string,
  ): Promise<{ reactor: Reactor; formula: RunnableFormula | null } | null> {
    this.loadText ??= `SELECT ${entityColumns(this.db.source.getMetadata(Reactor), 'r')},
        f.code AS "formulaCode", f.request_parameters AS "formulaParameters"
      FROM reactors r
      LEFT JOIN reactor_formulas f
        ON f.id = r.formula_id AND (f.tenant_id IS NULL OR f.tenant_id = r.tenant_id)
      WHERE r.tenant_id = $1 AND r.id = $2`;
    const [row] = await this.db.prepared<LoadedRow>('reactor-load', this.loadText, [tenantId, id]);
    if (row === undefined) {
      return null;
    }
    const { formulaCode, formulaParameters, ...columns } = row;
    const formula =
      formulaCode === null || formulaParameters === null
        ? null
        : { code: formulaCode, requestParameters: formulaParameters };
    return { reactor: Object.assign(new Reactor(), columns), formula };
  }
}
