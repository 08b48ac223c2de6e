import { LiquidError } from 'liquidjs';
import { ExpressionError } from './expression.errors';
import { isLimitError } from './filters/filter-kit';

const LIMIT_MESSAGES: Record<string, string> = {
  'parse length limit exceeded': 'the template is too long',
  'template render limit exceeded': 'the template took too long to render',
  'memory alloc limit exceeded': 'the template produces too much output or data',
};

/** ", line:L, col:C" of the template node that failed, when liquidjs knows it. */
function position(error: unknown): string {
  if (!LiquidError.is(error)) {
    return '';
  }
  const [line, col] = error.token.getPosition();
  return `, line:${line}, col:${col}`;
}

/**
 * Maps whatever a parse or render threw to an ExpressionError whose message is safe for API callers.
 * Parse errors only ever quote the template; render errors keep our own filter messages and the limit
 * messages, and hide everything else (a raw JS error message can quote the data being rendered).
 */
export function toExpressionError(error: unknown): ExpressionError {
  if (error instanceof ExpressionError) {
    return error;
  }
  const cause = LiquidError.is(error) && error.originalError ? error.originalError : error;
  if (isLimitError(cause)) {
    return new ExpressionError(LIMIT_MESSAGES[cause.message] ?? 'the template exceeds a limit');
  }
  if (cause instanceof RangeError && cause.message === 'Invalid string length') {
    return new ExpressionError(LIMIT_MESSAGES['memory alloc limit exceeded']);
  }
  if (cause instanceof ExpressionError) {
    return new ExpressionError(cause.message + position(error));
  }
  if (LiquidError.is(error) && (error.name === 'ParseError' || error.name === 'TokenizationError')) {
    return new ExpressionError(`invalid template: ${error.message}`);
  }
  return new ExpressionError(`the template could not be rendered${position(error)}`);
}
