import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { QueryFailedError } from 'typeorm';
import { CustomHttpResponse } from '../sandbox/sandbox-outcome';
import { ApiError } from './api-error';
import { problem, ProblemDetails } from './problem-details';

/** Framework and body-parser errors whose own messages may echo input: replaced by fixed texts. */
const FIXED_DETAIL: Record<number, string> = {
  400: 'The request could not be read.',
  404: 'The requested resource was not found.',
  405: 'The method is not allowed for this resource.',
  413: 'The request body is too large.',
  415: 'The content type is not supported.',
};

/** Turns every error into problem details; unknown errors become a 500 with no stack and no input echo. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof CustomHttpResponse && !response.headersSent) {
      // Tenant code chose this response (CustomHttpResponseError): sent as it is, not as a problem.
      response.status(exception.status).set(exception.headers).json(exception.body);
      return;
    }
    const body = this.toProblem(exception);
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(body.status).type('application/problem+json').json(body);
  }

  private toProblem(exception: unknown): ProblemDetails {
    if (exception instanceof ApiError) {
      return problem(exception.status, exception.detail, exception.errors);
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const payload = exception.getResponse();
      if (typeof payload === 'object' && payload !== null && 'problem' in payload) {
        return (payload as { problem: ProblemDetails }).problem;
      }
      return problem(status, FIXED_DETAIL[status] ?? problem(status).title);
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
    }
    // Log the type and stack only: driver and library messages can quote input values.
    const err = exception instanceof Error ? exception : new Error('non-error thrown');
    this.logger.error({ err: { type: err.name, stack: redactStack(err.stack) } }, 'unhandled error');
    return problem(500, 'An unexpected error occurred.');
  }
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
