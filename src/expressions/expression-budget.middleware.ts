import { Injectable, NestMiddleware } from '@nestjs/common';
import { ExpressionEngine } from './expression-engine';

/**
 * Gives every request one expression render-time budget (masks of a 100-token page included). Everything the
 * request awaits runs in the budget's async context. A middleware, not a global interceptor: the interceptor's
 * per-request Observable chain cost most of what a GET /health costs.
 */
@Injectable()
export class ExpressionBudgetMiddleware implements NestMiddleware {
  constructor(private readonly engine: ExpressionEngine) {}

  use(_req: unknown, _res: unknown, next: () => void): void {
    this.engine.withBudget(next);
  }
}
