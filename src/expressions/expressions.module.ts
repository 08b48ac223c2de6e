import { MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { ExpressionBudgetMiddleware } from './expression-budget.middleware';
import { ExpressionEngine } from './expression-engine';

@Module({
  providers: [ExpressionEngine],
  exports: [ExpressionEngine],
})
export class ExpressionsModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(ExpressionBudgetMiddleware).forRoutes('*');
  }
}
