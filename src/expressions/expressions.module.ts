import { Module } from '@nestjs/common';
import { ExpressionEngine } from './expression-engine';

/** The expression engine; a request's render budget lives in its context (common/request-context.ts). */
@Module({
  providers: [ExpressionEngine],
  exports: [ExpressionEngine],
})
export class ExpressionsModule {}
