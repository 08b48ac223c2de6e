import { LRUCache } from 'lru-cache';
import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { Context, Liquid, Output, Template, toValue, toValueSync, TypeGuards } from 'liquidjs';
import { currentWork, RenderBudget, runInContext, WorkContext } from '../common/request-context';
import { EXPRESSION_LIMITS } from './expression.limits';
import { ExpressionError } from './expression.errors';
import { countingFilter, countingOperators, countRenderedNodes, limitWork } from './expression-work';
import { registerVaultFilters, vaultFilters } from './filters';
import { jsonPathShortcut, NO_SHORTCUT } from './json-path-shortcut';
import { LimitedEmitter } from './limited-emitter';
import { toExpressionError } from './to-expression-error';

/** Tags that read template files; the vault has none, so they are removed rather than left pointing at disk. */
const FILE_TAGS = ['include', 'render', 'layout'];

/**
 * The one Liquid engine of the vault: masks, fingerprints, search indexes, aliases and detokenization all
 * render through it. Every call is synchronous and bounded by EXPRESSION_LIMITS.
 */
@Injectable()
export class ExpressionEngine {
  private readonly liquid: Liquid;
  /** Parsed templates by source, the least recently used dropped first. */
  private readonly cache = new LRUCache<string, Template[]>({ max: EXPRESSION_LIMITS.cacheEntries });

  constructor() {
    this.liquid = new Liquid({
      // Unknown filters fail at parse time; missing variables render empty, as masks over partial data expect.
      strictFilters: true,
      strictVariables: false,
      ownPropertyOnly: true,
      templates: {},
      parseLimit: EXPRESSION_LIMITS.parseLength,
      renderLimit: EXPRESSION_LIMITS.renderMs,
      memoryLimit: EXPRESSION_LIMITS.memory,
      operators: countingOperators(),
    });
    for (const tag of FILE_TAGS) {
      delete this.liquid.tags[tag];
    }
    registerVaultFilters(this.liquid);
    // liquidjs checks its render limit only between template nodes: a chain of filters in one output (the
    // whole of a typed render) would otherwise run unchecked, each filter over up to a megabyte of data.
    const native = new Set(Object.keys(vaultFilters()));
    for (const [name, filter] of Object.entries(this.liquid.filters)) {
      this.liquid.registerFilter(name, countingFilter(filter, native.has(name)));
    }
    countRenderedNodes(this.liquid);
  }

  /**
   * Runs `work` (and everything it awaits) with one render-time budget shared by all the expressions it
   * renders, as a request's expressions share theirs (budget()), for work outside a request.
   */
  withBudget<T>(work: () => T, ms: number = EXPRESSION_LIMITS.requestRenderMs): T {
    const context = new WorkContext();
    context.renderBudget = { remainingMs: ms, remainingWork: EXPRESSION_LIMITS.requestWork };
    return runInContext(context, work);
  }

  /** Throws ExpressionError when the template does not parse (bad syntax, unknown filter or tag). */
  parse(template: string): void {
    this.templates(template);
  }

  renderString(template: string, scope: Record<string, unknown>): string {
    return this.renderText(this.templates(template), scope);
  }

  /**
   * Typed render: a template that is exactly one `{{ ... }}` (surrounding whitespace aside) yields the value
   * its expression evaluates to (object, array, number, boolean, string, null or undefined); anything else
   * renders to a string.
   */
  render(template: string, scope: Record<string, unknown>): unknown {
    const templates = this.templates(template);
    const output = singleOutput(templates);
    if (!output) {
      return this.renderText(templates, scope);
    }
    return this.rendering(scope, (ctx): unknown => {
      try {
        return toValue(toValueSync(output.value.value(ctx, false))) as unknown;
      } catch (error) {
        throw toExpressionError(error);
      }
    });
  }

  /**
   * `{{ value <filters> }}` rendered typed, as render gives it. A chain that is only `| json: '<path>'` and
   * selects a value is answered without a Liquid context, charged to the budget as its render would be; the
   * engine renders every other chain, and any the budget would refuse.
   */
  renderFiltered(value: unknown, filters: string): unknown {
    const budget = currentBudget();
    // The json filter's work (expression-work.ts: a call, and its input's length if it is a string).
    const units = 1 + (typeof value === 'string' ? Math.floor(value.length / 1000) : 0);
    if (
      units <= EXPRESSION_LIMITS.work &&
      (budget === undefined || (budget.remainingMs > 0 && units <= budget.remainingWork))
    ) {
      const started = performance.now();
      const selected = jsonPathShortcut(value, filters);
      if (
        selected !== NO_SHORTCUT &&
        !(typeof selected === 'string' && selected.length > EXPRESSION_LIMITS.memory)
      ) {
        if (budget !== undefined) {
          budget.remainingWork -= units;
          budget.remainingMs -= performance.now() - started;
        }
        return selected;
      }
    }
    return this.render(`{{ value ${filters} }}`, { value });
  }

  /** Renders every string leaf of a mask definition typed; keys and other primitives stay as they are. */
  renderDeep(value: unknown, scope: Record<string, unknown>): unknown {
    return this.walk(value, scope, 0);
  }

  /** True when the string holds a Liquid output `{{ ... }}` or a tag `{%`. */
  isExpression(value: string): boolean {
    const open = value.indexOf('{{');
    return (open >= 0 && value.includes('}}', open + 2)) || value.includes('{%');
  }

  private walk(value: unknown, scope: Record<string, unknown>, depth: number): unknown {
    if (typeof value === 'string') {
      return value.includes('{{') || value.includes('{%') ? this.render(value, scope) : value;
    }
    if (typeof value !== 'object' || value === null) {
      return value;
    }
    if (depth >= EXPRESSION_LIMITS.depth) {
      throw new ExpressionError(`the value is nested deeper than ${EXPRESSION_LIMITS.depth} levels`);
    }
    if (Array.isArray(value)) {
      return value.map((item) => this.walk(item, scope, depth + 1));
    }
    // fromEntries defines own properties, so a "__proto__" key stays a plain key.
    return Object.fromEntries(
      Object.entries(value).map(([key, item]) => [key, this.walk(item, scope, depth + 1)]),
    );
  }

  private templates(template: string): Template[] {
    const cached = this.cache.get(template);
    if (cached) {
      return cached;
    }
    let parsed: Template[];
    try {
      // Charged too: a page of masks with thousands of distinct leaves is mostly parsing
      parsed = this.charged(() => this.liquid.parse(template));
    } catch (error) {
      throw toExpressionError(error);
    }
    if (template.length <= EXPRESSION_LIMITS.cacheTemplateLength) {
      this.cache.set(template, parsed);
    }
    return parsed;
  }

  private renderText(templates: Template[], scope: Record<string, unknown>): string {
    return this.rendering(scope, (ctx) => {
      const emitter = new LimitedEmitter(ctx);
      try {
        toValueSync(this.liquid.renderer.renderTemplates(templates, ctx, emitter));
      } catch (error) {
        throw toExpressionError(error);
      }
      return emitter.buffer;
    });
  }

  /** Charges the (synchronous) render's time to the current budget, if any. */
  private charged<T>(render: () => T): T {
    const budget = currentBudget();
    const started = performance.now();
    try {
      return render();
    } finally {
      if (budget !== undefined) {
        budget.remainingMs -= performance.now() - started;
      }
    }
  }

  /**
   * Renders with a fresh context: its own memory budget, a time limit and a work limit of the per-render
   * limit or what is left of the current budget, whichever is less; a shallow copy of `scope` so
   * `increment` cannot write back. The time and work used are charged to the budget.
   */
  private rendering<T>(scope: Record<string, unknown>, render: (ctx: Context) => T): T {
    const budget = currentBudget();
    const renderLimit = Math.max(0, Math.min(EXPRESSION_LIMITS.renderMs, budget?.remainingMs ?? Infinity));
    const work = limitWork(
      EXPRESSION_LIMITS.memory,
      Math.min(EXPRESSION_LIMITS.work, budget?.remainingWork ?? Infinity),
    );
    const ctx = new Context(
      { ...scope },
      this.liquid.options,
      { sync: true, renderLimit },
      { liquid: this.liquid, memoryLimit: work },
    );
    try {
      return this.charged(() => render(ctx));
    } finally {
      if (budget !== undefined) {
        budget.remainingWork -= work.used;
      }
    }
  }
}

/**
 * The render budget of the current request (or withBudget), made by its first render, so the count of
 * masks, indexes or tokens in a request cannot multiply the per-render limit; none outside both.
 */
function currentBudget(): RenderBudget | undefined {
  const work = currentWork();
  if (work === undefined) {
    return undefined;
  }
  work.renderBudget ??= {
    remainingMs: EXPRESSION_LIMITS.requestRenderMs,
    remainingWork: EXPRESSION_LIMITS.requestWork,
  };
  return work.renderBudget;
}

/** The Output of a template made of one `{{ ... }}` and, at most, whitespace around it. */
function singleOutput(templates: Template[]): Output | undefined {
  const meaningful = templates.filter(
    (t) => !(TypeGuards.isHTMLToken(t.token) && t.token.getContent().trim() === ''),
  );
  const [only] = meaningful;
  return meaningful.length === 1 && only instanceof Output ? only : undefined;
}
