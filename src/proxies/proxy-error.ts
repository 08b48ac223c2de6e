import type { Response } from 'express';
import { sendCustomResponse } from '../common/security-headers';
import { errorHeaders } from '../common/database-unavailable';
import { toProblem } from '../common/to-problem';
import { OutboundError } from '../outbound';
import { CustomHttpResponse } from '../common/custom-http-response';

/**
 * Answers a failure of the proxy itself as `{ "proxy_error": <problem details> }` (spec §4.5 rule 5), or
 * a transform's CustomHttpResponseError as the response it describes. Nothing of the request is quoted.
 */
export function sendProxyError(res: Response, err: unknown): void {
  if (res.headersSent) {
    // The destination's answer had started: all that is left is to cut it short.
    res.destroy();
    return;
  }
  if (err instanceof OutboundError && err.failure === 'aborted') {
    // Our caller went away first; nobody reads an answer.
    res.destroy();
    return;
  }
  if (err instanceof CustomHttpResponse) {
    sendCustomResponse(res, err);
    return;
  }
  res.set(errorHeaders(err));
  const problem = toProblem(err);
  res.status(problem.status).type('application/json').json({ proxy_error: problem });
}
