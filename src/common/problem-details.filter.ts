import { ArgumentsHost, Catch, ExceptionFilter, NotFoundException } from '@nestjs/common';
import { ChosenStateError } from './api-error';
import type { Request, Response } from 'express';
import { CustomHttpResponse } from './custom-http-response';
import { allowedMethods } from './allowed-methods';
import { sendCustomResponse } from './security-headers';
import { problem } from './problem-details';
import { toProblem } from './to-problem';
import { errorHeaders } from './database-unavailable';

/** Renders every error as problem details (see toProblem); a response chosen by tenant code as untrusted. */
@Catch()
export class ProblemDetailsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (exception instanceof CustomHttpResponse && !response.headersSent) {
      // Tenant code chose this response (CustomHttpResponseError): not a problem, and sandboxed.
      sendCustomResponse(response, exception);
      return;
    }
    if (exception instanceof NotFoundException && !response.headersSent) {
      // A path we serve, called with another method: 405 and what it allows.
      const allow = allowedMethods(host.switchToHttp().getRequest<Request>());
      if (allow.length > 0) {
        response
          .status(405)
          .set('Allow', allow.join(', '))
          .type('application/problem+json')
          .json(problem(405, `This resource allows ${allow.join(', ')}.`));
        return;
      }
    }
    const body = toProblem(exception);
    if (response.headersSent) {
      response.end();
      return;
    }
    if (exception instanceof ChosenStateError) {
      // Read by the request logger (src/logging.ts): no error level for a state the operator chose.
      response.locals.chosenState = true;
    }
    response.set(errorHeaders(exception));
    response.status(body.status).type('application/problem+json').json(body);
  }
}
