export { ExpressionEngine } from './expression-engine';
export { ExpressionError } from './expression.errors';
export { EXPRESSION_LIMITS } from './expression.limits';
export { ExpressionsModule } from './expressions.module';
export { expressionFieldError, expressionMessage } from './expression-field-error';
