import { Injectable } from '@nestjs/common';
import { IsNull } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity';
import { Database } from '../database/database.service';
import { findIdAndNamePage } from '../database/id-and-name-page';
import { ListReactorFormulasQueryDto } from './dto/reactor-formula.dto';
import { ReactorFormula } from './reactor-formula.entity';

/** Reactor formulas: official ones (no tenant), which every tenant sees, and each tenant's private ones. */
@Injectable()
export class ReactorFormulasRepository {
  constructor(private readonly db: Database) {}

  async insert(formula: ReactorFormula): Promise<void> {
    await this.db.repository(ReactorFormula).insert(formula);
  }

  /** The formulas the tenant sees, newest first, filtered by a name wildcard; and the count of all matches. */
  findVisiblePage(tenantId: string, query: ListReactorFormulasQueryDto): Promise<[ReactorFormula[], number]> {
    return findIdAndNamePage(this.db.repository(ReactorFormula), tenantId, query, 'own-and-unowned');
  }

  /** An official formula or one of the tenant's; null for none, or another tenant's. */
  findVisible(tenantId: string, id: string): Promise<ReactorFormula | null> {
    return this.db.repository(ReactorFormula).findOne({
      where: [
        { id, tenantId },
        { id, tenantId: IsNull() },
      ],
    });
  }

  /** An official formula (no tenant); null for none. */
  findOfficial(id: string): Promise<ReactorFormula | null> {
    return this.db.repository(ReactorFormula).findOne({ where: { id, tenantId: IsNull() } });
  }

  /** One of the tenant's private formulas. */
  async update(tenantId: string, id: string, fields: QueryDeepPartialEntity<ReactorFormula>): Promise<void> {
    await this.db.repository(ReactorFormula).update({ tenantId, id }, fields);
  }

  async delete(tenantId: string, id: string): Promise<void> {
    await this.db.repository(ReactorFormula).delete({ tenantId, id });
  }

  /** The applications the tenant's reactors built from the formula run as. */
  async boundApplicationIds(tenantId: string, formulaId: string): Promise<string[]> {
    const rows = await this.db.query<{ application_id: string }>(
      `SELECT DISTINCT application_id FROM reactors
        WHERE tenant_id = $1 AND formula_id = $2 AND application_id IS NOT NULL`,
      [tenantId, formulaId],
    );
    return rows.map((row) => row.application_id);
  }

  /** How many of the tenant's reactors run the formula. */
  async countReactorsUsing(tenantId: string, formulaId: string): Promise<number> {
    const [{ count }] = await this.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM reactors WHERE tenant_id = $1 AND formula_id = $2',
      [tenantId, formulaId],
    );
    return Number(count);
  }
}
