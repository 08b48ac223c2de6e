import { AsyncLocalStorage } from 'node:async_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { TrustedProxies } from '../common/client-address';
import type { RequestOrigin } from './audit-event';

const MAX_USER_AGENT = 256;
const origins = new AsyncLocalStorage<{ req: Request; res: Response; proxies: TrustedProxies }>();

export type RefusalRecorder = (req: Request, res: Response, origin: RequestOrigin) => Promise<void>;

/**
 * Makes the current request known to audit records written anywhere below it (services do not see the
 * request), and hands every 401 and 403 to `refused` once answered. Registered after the body parsers,
 * whose stream callbacks would leave the async context.
 */
export function requestOrigins(proxies: TrustedProxies, refused: RefusalRecorder) {
  return (req: Request, res: Response, next: NextFunction): void => {
    res.once('finish', () => {
      if (res.statusCode === 401 || res.statusCode === 403) {
        void refused(req, res, originOf(req, res, proxies));
      }
    });
    origins.run({ req, res, proxies }, next);
  };
}

/** Request id (the BT-TRACE-ID the response carries), client address and user agent; nulls outside a request. */
export function currentOrigin(): RequestOrigin {
  const open = origins.getStore();
  if (open === undefined) {
    return { requestId: null, remoteAddress: null, userAgent: null };
  }
  return originOf(open.req, open.res, open.proxies);
}

export function originOf(req: Request, res: Response, proxies: TrustedProxies): RequestOrigin {
  const traceId = res.getHeader('bt-trace-id');
  const agent = req.headers['user-agent'];
  return {
    requestId: typeof traceId === 'string' ? traceId : null,
    remoteAddress: proxies.clientOf(req),
    userAgent: typeof agent === 'string' ? agent.slice(0, MAX_USER_AGENT) : null,
  };
}
