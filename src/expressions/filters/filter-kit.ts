import { AssertionError, Context, FilterImplOptions, toValue } from 'liquidjs';
import { ExpressionError } from '../expression.errors';
import { useMemory } from '../expression-work';

/** What a vault filter may ask of the render it runs in. */
export interface FilterRun {
  /** Count `size` characters against the render's memory limit; call it before allocating them. */
  charge(size: number): void;
}

/** A vault filter: a pure function of its input and arguments; null/undefined never reach it. */
export type VaultFilter = (run: FilterRun, input: unknown, ...args: unknown[]) => unknown;

/** Throws the filter's complaint; the registry prefixes it with the filter name. Never put input values in it. */
export function fail(message: string): never {
  throw new ExpressionError(message);
}

/** liquidjs signals its parse/render/memory limits with an AssertionError ending in "limit exceeded". */
export function isLimitError(error: unknown): error is AssertionError {
  return error instanceof AssertionError && error.message.endsWith('limit exceeded');
}

/**
 * Adapts a vault filter to liquidjs: unwraps drops, passes null/undefined through, charges the result to the
 * memory limit and turns anything thrown into an ExpressionError without the raw JS message (it may quote input).
 */
export function toLiquidFilter(name: string, filter: VaultFilter): FilterImplOptions {
  return function (this: { context: Context }, input: unknown, ...args: unknown[]): unknown {
    const value: unknown = toValue(input);
    if (value === null || value === undefined) {
      return value;
    }
    const run: FilterRun = { charge: (size) => useMemory(this.context, size) };
    try {
      const result = filter(run, value, ...args.map((arg): unknown => toValue(arg)));
      if (typeof result === 'string') {
        run.charge(result.length);
      }
      return result;
    } catch (error) {
      if (isLimitError(error)) {
        throw error;
      }
      if (error instanceof ExpressionError) {
        throw new ExpressionError(`${name}: ${error.message}`);
      }
      throw new ExpressionError(`${name}: the filter could not be applied to this value`);
    }
  };
}
