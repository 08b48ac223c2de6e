import { Module } from '@nestjs/common';
import { ExpressionEngine } from './expression-engine';

@Module({
  providers: [ExpressionEngine],
  exports: [ExpressionEngine],
})
export class ExpressionsModule {}
