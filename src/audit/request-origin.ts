import { currentRequest, RequestContext } from '../common/request-context';
import type { RequestOrigin } from './audit-event';

const OUTSIDE_A_REQUEST: RequestOrigin = { requestId: null, remoteAddress: null, userAgent: null };

/** Request id (the BT-TRACE-ID the response carries), client address and user agent; nulls outside a request. */
export function currentOrigin(): RequestOrigin {
  const context = currentRequest();
  return context === undefined ? OUTSIDE_A_REQUEST : originOf(context);
}

export function originOf(context: RequestContext): RequestOrigin {
  return { requestId: context.id, remoteAddress: context.clientAddress, userAgent: context.userAgent };
}
