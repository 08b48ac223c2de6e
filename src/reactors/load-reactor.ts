import type { EntityManager } from 'typeorm';
import { preparedQuery } from '../database/prepared-query';
import type { FormulaRequestParameter } from '../reactor-formulas/reactor-formula.entity';
import { Reactor } from './reactor.entity';

/** What a formula reactor runs: the formula's code and its declared request parameters. */
export interface RunnableFormula {
  code: string;
  requestParameters: FormulaRequestParameter[];
}

/**
 * A reactor and the formula it runs, when that formula is visible to the reactor's tenant (official or the
 * tenant's own, as ReactorFormulasService.findVisible decides), in one statement: an invocation reads both
 * on every call.
 */
const LOAD_REACTOR = `SELECT r.tenant_id, r.id, r.name, r.formula_id, r.code, r.runtime, r.application_id,
    r.configuration, r.created_by, r.created_at, r.modified_by, r.modified_at,
    f.code AS formula_code, f.request_parameters AS formula_parameters
  FROM reactors r
  LEFT JOIN reactor_formulas f
    ON f.id = r.formula_id AND (f.tenant_id IS NULL OR f.tenant_id = r.tenant_id)
  WHERE r.tenant_id = $1 AND r.id = $2`;

interface LoadedRow {
  tenant_id: string;
  id: string;
  name: string;
  formula_id: string | null;
  code: string | null;
  runtime: Reactor['runtime'];
  application_id: string | null;
  configuration: Buffer;
  created_by: string | null;
  created_at: Date;
  modified_by: string | null;
  modified_at: Date | null;
  formula_code: string | null;
  formula_parameters: FormulaRequestParameter[] | null;
}

/** Null when the tenant has no such reactor; `formula` null for a code reactor or a formula not visible. */
export async function loadReactorRow(
  manager: EntityManager,
  tenantId: string,
  id: string,
  prepared: boolean,
): Promise<{ reactor: Reactor; formula: RunnableFormula | null } | null> {
  const [row] = await preparedQuery<LoadedRow>(
    manager,
    'reactor-load',
    LOAD_REACTOR,
    [tenantId, id],
    prepared,
  );
  if (row === undefined) {
    return null;
  }
  const reactor = Object.assign(new Reactor(), {
    tenantId: row.tenant_id,
    id: row.id,
    name: row.name,
    formulaId: row.formula_id,
    code: row.code,
    runtime: row.runtime,
    applicationId: row.application_id,
    configuration: row.configuration,
    createdBy: row.created_by,
    createdAt: row.created_at,
    modifiedBy: row.modified_by,
    modifiedAt: row.modified_at,
  });
  const formula =
    row.formula_code === null || row.formula_parameters === null
      ? null
      : { code: row.formula_code, requestParameters: row.formula_parameters };
  return { reactor, formula };
}
