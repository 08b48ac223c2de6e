import { CallHandler, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ExpressionEngine } from './expression-engine';

/** Gives every request one expression render-time budget (masks of a 100-token page included). */
@Injectable()
export class ExpressionBudgetInterceptor implements NestInterceptor {
  constructor(private readonly engine: ExpressionEngine) {}

  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    // Nest binds the handler to the async context in which handle() is called, so awaits inside keep the budget.
    return this.engine.withBudget(() => next.handle());
  }
}
