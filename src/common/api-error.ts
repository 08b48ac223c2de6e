import type { FieldErrors } from './field-errors';

export type { FieldErrors };

/**
 * The one error type services throw. The global filter renders it as problem details; `detail` and
 * `errors` are shown to the caller, so they must never contain sensitive values.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly errors?: FieldErrors,
    /** Response headers that belong to the error (Retry-After); never sensitive. */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
  }

  /** 429 with Retry-After in whole seconds (at least 1). */
  static tooManyRequests(detail: string, retryAfterSeconds: number): ApiError {
    const seconds = Math.max(1, Math.ceil(retryAfterSeconds));
    return new ApiError(429, `${detail} Try again in ${seconds} seconds.`, undefined, {
      'Retry-After': String(seconds),
    });
  }

  static badRequest(detail: string, errors?: FieldErrors): ApiError {
    return new ApiError(400, detail, errors);
  }

  static validation(errors: FieldErrors): ApiError {
    return new ApiError(400, 'One or more validation errors occurred.', errors);
  }

  static field(path: string, message: string): ApiError {
    return ApiError.validation({ [path]: [message] });
  }

  static unauthorized(detail = 'A valid BT-API-KEY header is required.'): ApiError {
    return new ApiError(401, detail);
  }

  static forbidden(
    detail = 'The application does not have the permission required for this operation.',
  ): ApiError {
    return new ApiError(403, detail);
  }

  static notFound(resource: string): ApiError {
    return new ApiError(404, `${resource} not found.`);
  }

  static conflict(detail: string): ApiError {
    return new ApiError(409, detail);
  }

  static unprocessable(detail: string, errors?: FieldErrors): ApiError {
    return new ApiError(422, detail, errors);
  }
}

/**
 * An answer for a state the operator chose (a sealed vault): the caller is told so, and it is no fault, so its
 * request is logged at info rather than as an error that pages someone.
 */
export class ChosenStateError extends ApiError {}
