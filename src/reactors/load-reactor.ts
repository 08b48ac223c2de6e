import type { Repository } from 'typeorm';
import { entityColumns } from '../database/entity-columns';
import { preparedQuery } from '../database/prepared-query';
import type { FormulaRequestParameter } from '../reactor-formulas/reactor-formula.entity';
import { Reactor } from './reactor.entity';

/** What a formula reactor runs: the formula's code and its declared request parameters. */
export interface RunnableFormula {
  code: string;
  requestParameters: FormulaRequestParameter[];
}

/** What the react path needs of a reactor: the code to run and its decrypted configuration. */
export interface LoadedReactor {
  reactor: Reactor;
  code: string;
  /** The formula's request parameters; null for a code reactor, whose arguments pass unfiltered. */
  parameters: readonly FormulaRequestParameter[] | null;
  configuration: Record<string, unknown>;
  /** A code reactor's `runtime.timeout`; undefined: the sandbox limit. */
  timeoutMs: number | undefined;
}

type LoadedRow = Reactor & {
  formulaCode: string | null;
  formulaParameters: FormulaRequestParameter[] | null;
};

/**
 * A reactor and the formula it runs, in one prepared statement: an invocation reads both on every call.
 * The formula counts only when the reactor's tenant may see it, official or its own: the rule of
 * ReactorFormulasService.findVisible, here in the join.
 */
export class ReactorLoader {
  private readonly text: string;

  constructor(
    private readonly reactors: Repository<Reactor>,
    private readonly prepared: boolean,
  ) {
    this.text = `SELECT ${entityColumns(reactors.metadata, 'r')},
        f.code AS "formulaCode", f.request_parameters AS "formulaParameters"
      FROM reactors r
      LEFT JOIN reactor_formulas f
        ON f.id = r.formula_id AND (f.tenant_id IS NULL OR f.tenant_id = r.tenant_id)
      WHERE r.tenant_id = $1 AND r.id = $2`;
  }

  /** Null when the tenant has no such reactor; `formula` null for a code reactor or a formula not visible. */
  async load(
    tenantId: string,
    id: string,
  ): Promise<{ reactor: Reactor; formula: RunnableFormula | null } | null> {
    const [row] = await preparedQuery<LoadedRow>(
      this.reactors.manager,
      'reactor-load',
      this.text,
      [tenantId, id],
      this.prepared,
    );
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
