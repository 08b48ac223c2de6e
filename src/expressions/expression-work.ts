import { Context, defaultOperators, FilterImplOptions, Liquid, Operators } from 'liquidjs';
import { performance } from 'node:perf_hooks';
import { EXPRESSION_LIMITS } from './expression.limits';
import { ExpressionError } from './expression.errors';

/**
 * The work one render does, counted in units rather than only timed: liquidjs checks its time limit
 * between template nodes, so a loop runs up to the limit on the main thread whatever it costs. Units:
 * - each template node rendered, and each block (loop iteration, if branch) entered: 1;
 * - each filter call and operator: 1, plus 4 per array element and 1 per 1,000 characters it is given
 *   (vault filters are native code: their array inputs are not counted; liquidjs' `where` takes ~2.5 µs
 *   per element);
 * - memory liquidjs allocates (ranges, string and array filter results): one per
 *   EXPRESSION_LIMITS.memoryPerWorkUnit characters or elements, charged before allocating.
 * Output text and vault filter results are charged to the memory limit only.
 *
 * It is the render context's memory limiter (liquidjs' own Limiter, extended), handed to the Context when it
 * is made: liquidjs charges memory through `use`, which charges the work first.
 */
export class WorkLimit extends (new Context().memoryLimit.constructor as LimiterClass) {
  used = 0;

  constructor(
    memory: number,
    readonly workLimit: number,
  ) {
    super('memory alloc', memory);
  }

  override use(size: number): void {
    this.charge(Math.ceil(+size / EXPRESSION_LIMITS.memoryPerWorkUnit));
    super.use(size);
  }

  /** Charges `size` to the memory limit only (output text, vault filter results). */
  useMemory(size: number): void {
    super.use(size);
  }

  charge(units: number): void {
    this.used += units;
    if (this.used > this.workLimit) {
      throw new ExpressionError(
        `the template takes too long to render: it exceeds ${EXPRESSION_LIMITS.work.toLocaleString('en-US')} steps`,
      );
    }
  }
}

/** liquidjs' Limiter, which it does not export: its memory limiter is one (Context.memoryLimit). */
type LimiterClass = new (resource: string, limit: number) => Context['memoryLimit'];

const UNITS_PER_ELEMENT = 4;

/** The work limit of a render context made with one as its memory limiter (limitWork), else undefined. */
function workOf(ctx: Context): WorkLimit | undefined {
  const memory = ctx.memoryLimit;
  return memory instanceof WorkLimit ? memory : undefined;
}

/** The limiter of a fresh render context: the memory limit `memory` and the work limit `work`. */
export function limitWork(memory: number, work: number): WorkLimit {
  return new WorkLimit(memory, work);
}

/** Charges `size` to the render's memory limit without counting it as work (output text, vault filter results). */
export function useMemory(ctx: Context, size: number): void {
  const work = workOf(ctx);
  if (work === undefined) {
    ctx.memoryLimit.use(size);
  } else {
    work.useMemory(size);
  }
}

function sizeOf(value: unknown, countArrays: boolean): number {
  if (typeof value === 'string') {
    return Math.floor(value.length / 1000);
  }
  return countArrays && Array.isArray(value) ? value.length * UNITS_PER_ELEMENT : 0;
}

/** Counts every template block and node the renderer renders. */
export function countRenderedNodes(liquid: Liquid): void {
  const renderer = liquid.renderer;
  const renderTemplates = renderer.renderTemplates.bind(renderer);
  renderer.renderTemplates = function (templates, ctx, emitter) {
    workOf(ctx)?.charge(1 + templates.length);
    return renderTemplates(templates, ctx, emitter);
  };
}

/** The standard operators, each charging its operands (`contains` walks a whole array, `==` compares them). */
export function countingOperators(): Operators {
  const operators: Operators = {};
  for (const [name, operator] of Object.entries(defaultOperators)) {
    const counted = function* (this: unknown, ...args: unknown[]): Generator<unknown, boolean, unknown> {
      const ctx = args[args.length - 1] as Context;
      const operands = args.slice(0, -1);
      workOf(ctx)?.charge(1 + operands.reduce<number>((sum, v) => sum + sizeOf(v, true), 0));
      return (yield (operator as (...a: unknown[]) => unknown).apply(this, args)) as boolean;
    };
    operators[name] = counted as Operators[string];
  }
  return operators;
}

/**
 * A filter that charges its call as work and then fails with the render-limit error once the render's
 * time is up (liquidjs checks time only between nodes, not inside one output's chain of filters).
 */
export function countingFilter(filter: FilterImplOptions, native: boolean): FilterImplOptions {
  const handler = typeof filter === 'function' ? filter : filter.handler;
  const counted: typeof handler = function (
    this: ThisParameterType<typeof handler>,
    value: unknown,
    ...args: unknown[]
  ): unknown {
    workOf(this.context)?.charge(1 + sizeOf(value, !native));
    this.context.renderLimit.check(performance.now());
    return handler.call(this, value, ...args) as unknown;
  };
  return typeof filter === 'function' ? counted : { ...filter, handler: counted };
}
