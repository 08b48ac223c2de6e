import { ApiError } from '../common/api-error';
import { ExpressionError } from './expression.errors';

/**
 * What to tell a caller about an expression that failed at `path`: the ExpressionError's own message
 * (safe by construction), or `fallback` for anything else, whose message could quote rendered data.
 */
export function expressionMessage(err: unknown, fallback: string): string {
  return err instanceof ExpressionError ? err.message : fallback;
}

/** The field error (400) for an expression that failed at the request path `path`. */
export function expressionFieldError(
  path: string,
  err: unknown,
  fallback = 'could not be evaluated',
): ApiError {
  return ApiError.field(path, expressionMessage(err, fallback));
}
