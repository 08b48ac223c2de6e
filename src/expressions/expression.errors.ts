/**
 * A template problem (bad syntax, unknown filter, wrong filter argument, limit exceeded).
 * The message is shown to API callers, so it names the template problem only and never a rendered value.
 */
export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExpressionError';
  }
}
