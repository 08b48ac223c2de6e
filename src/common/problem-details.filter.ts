import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Response } from 'express';
import { CustomHttpResponse } from '../sandbox/sandbox-outcome';
import { toProblem } from './to-problem';

/** Renders every error as problem details (see toProblem); a response chosen by tenant code as it is. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof CustomHttpResponse && !response.headersSent) {
      // Tenant code chose this response (CustomHttpResponseError): sent as it is, not as a problem.
      response.status(exception.status).set(exception.headers).json(exception.body);
      return;
    }
    const body = toProblem(exception);
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(body.status).type('application/problem+json').json(body);
  }
}
