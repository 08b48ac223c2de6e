import { HttpException, Logger } from '@nestjs/common';
import { QueryFailedError } from 'typeorm';
import { ApiError } from './api-error';
import { connectionFailure, databaseUnavailable } from './database-unavailable';
import { problem, ProblemDetails } from './problem-details';

/** Framework and body-parser errors whose own messages may echo input: replaced by fixed texts. */
const FIXED_DETAIL: Record<number, string> = {
  400: 'The request could not be read.',
  404: 'The requested resource was not found.',
  405: 'The method is not allowed for this resource.',
  413: 'The request body is too large.',
  415: 'The content type is not supported.',
};

const logger = new Logger('Errors');

/**
 * The one mapping from anything thrown to the common error body (DESIGN §7): ApiError as it says,
 * framework and body-parser errors with fixed texts, a lost database connection as 503, database errors
 * caused by input as 4xx, everything else a 500 that is logged (type and stack only) and never echoes
 * input. Used by the global filter and by code that wraps errors itself (the proxy's `proxy_error`).
 */
export function toProblem(exception: unknown): ProblemDetails {
  if (exception instanceof ApiError) {
    return problem(exception.status, exception.detail, exception.errors);
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return problem(status, FIXED_DETAIL[status] ?? problem(status).title);
  }
  const lostDatabase = connectionFailure(exception);
  if (lostDatabase !== null) {
    // The cause tells a refused connection from a full server (53300) or a timeout.
    logger.warn(`database unavailable: ${lostDatabase}`);
    return toProblem(databaseUnavailable());
  }
  const httpStatus = statusOf(exception);
  if (httpStatus !== undefined && httpStatus >= 400 && httpStatus < 500) {
    return problem(httpStatus, FIXED_DETAIL[httpStatus] ?? problem(httpStatus).title);
  }
  if (exception instanceof QueryFailedError) {
    const code = (exception.driverError as { code?: string }).code;
    if (code === '23505') {
      return problem(409, 'A resource with the same identifier already exists.');
    }
    // PostgreSQL text and jsonb cannot hold U+0000 (22021 in text, 22P05 in jsonb): the input is at fault
    if (code === '22021' || code === '22P05') {
      return problem(400, 'The request contains a character that cannot be stored (U+0000).');
    }
    // invalid text representation: input the database cannot read as its type (a last line of defence)
    if (code === '22P02') {
      return problem(400, 'The request contains a value that cannot be stored.');
    }
  }
  // Log the type and stack only: driver and library messages can quote input values.
  const err = exception instanceof Error ? exception : new Error('non-error thrown');
  logger.error({ err: { type: err.name, stack: redactStack(err.stack) } }, 'unhandled error');
  return problem(500, 'An unexpected error occurred.');
}

/** body-parser and other connect-style errors carry `status`/`statusCode`. */
function statusOf(exception: unknown): number | undefined {
  if (typeof exception !== 'object' || exception === null) {
    return undefined;
  }
  const value =
    (exception as { status?: unknown; statusCode?: unknown }).status ??
    (exception as { statusCode?: unknown }).statusCode;
  return typeof value === 'number' ? value : undefined;
}

function redactStack(stack: string | undefined): string | undefined {
  // The first stack line repeats the message; keep only the frames.
  return stack?.split('\n').slice(1).join('\n');
}
