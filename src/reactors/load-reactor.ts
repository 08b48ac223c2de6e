import type { FormulaRequestParameter } from '../reactor-formulas/reactor-formula.entity';
import type { Reactor } from './reactor.entity';

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
