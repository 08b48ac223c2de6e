import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';

/**
 * Aborted when the client goes away before its response is complete (the connection closed early), so
 * work done only for that response (a queued sandbox run, an outbound request) can be dropped.
 */
export function clientGoneSignal(res: Response): AbortSignal {
  const aborter = new AbortController();
  const gone = (): void => {
    if (!res.writableFinished) {
      aborter.abort();
    }
  };
  if (res.socket === null || res.socket.destroyed) {
    gone();
  } else {
    res.once('close', gone);
  }
  return aborter.signal;
}

/** The route's clientGoneSignal, as a handler parameter. */
export const ClientGone = createParamDecorator((_data: unknown, ctx: ExecutionContext): AbortSignal =>
  clientGoneSignal(ctx.switchToHttp().getResponse<Response>()),
);
