import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import type { TrustedProxies } from './client-address';

const MAX_USER_AGENT = 256;
const TRACE_ID = /^[\w.-]{1,64}$/;

/** Render time (milliseconds) and work (expression-work.ts units) left to the expressions of one request. */
export interface RenderBudget {
  remainingMs: number;
  remainingWork: number;
}

/** What one unit of work shares with everything it calls and awaits: here, its expression render budget. */
export class WorkContext {
  /** Made by the first expression rendered (ExpressionEngine); most requests render none. */
  renderBudget: RenderBudget | undefined = undefined;
}

/**
 * One HTTP request as the code below it sees it (services do not see the request): its id (the
 * BT-TRACE-ID it answers with), the client address, parsed once and only when asked, and the app's log.
 */
export class RequestContext extends WorkContext {
  readonly startedAt = performance.now();
  /** An error the response emitted (a write after its end): logged with the request's line. */
  failure: Error | undefined = undefined;
  private address: string | undefined = undefined;

  constructor(
    readonly id: string,
    readonly req: Request,
    readonly res: Response,
    readonly log: Logger,
    private readonly proxies: TrustedProxies,
  ) {
    super();
  }

  /** The client's address: the socket's peer, or what trusted proxies forwarded (TrustedProxies.clientOf). */
  get clientAddress(): string {
    this.address ??= this.proxies.clientOf(this.req);
    return this.address;
  }

  get userAgent(): string | null {
    const agent = this.req.headers['user-agent'];
    return typeof agent === 'string' ? agent.slice(0, MAX_USER_AGENT) : null;
  }
}

const contexts = new AsyncLocalStorage<WorkContext>();
/** A request's context, as a property of the request: a WeakMap's entries cost the garbage collector more. */
const CONTEXT = Symbol('request context');
type WithContext = Request & { [CONTEXT]?: RequestContext };

export function currentWork(): WorkContext | undefined {
  return contexts.getStore();
}

export function currentRequest(): RequestContext | undefined {
  const open = contexts.getStore();
  return open instanceof RequestContext ? open : undefined;
}

/** Runs `work` (and everything it awaits) in `context`. */
export function runInContext<T>(context: WorkContext, work: () => T): T {
  return contexts.run(context, work);
}

/** The context of a request, from the moment it arrived; set by requestContexts. */
export function contextOf(req: Request): RequestContext | undefined {
  return (req as WithContext)[CONTEXT];
}

/**
 * The first middleware: gives the request its context and id (BT-TRACE-ID, kept when the caller sent a
 * well-formed one), and hands the context to `finished` once, when the response is done or the
 * connection closed before it (`completed` false). The one listener of the request: metrics, the log line
 * and refusal audits all run from it.
 */
export function requestContexts(
  log: Logger,
  proxies: TrustedProxies,
  finished: (context: RequestContext, completed: boolean) => void,
) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const incoming = req.headers['bt-trace-id'];
    const id = typeof incoming === 'string' && TRACE_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('BT-TRACE-ID', id);
    const context = new RequestContext(id, req, res, log, proxies);
    (req as WithContext)[CONTEXT] = context;
    // A response emits `close` after `finish`, and alone when the connection closes first.
    res.on('close', () => finished(context, res.writableFinished));
    // Unheard, an `error` (a write after the end) would end the process.
    res.on('error', (err) => {
      context.failure = err;
    });
    next();
  };
}

/** The client address of a request (parsed once, by its context). */
export function clientAddressOf(req: Request): string {
  const context = contextOf(req);
  if (context === undefined) {
    throw new Error('a request without a context: requestContexts must be the first middleware');
  }
  return context.clientAddress;
}

/**
 * Opens the request's context for everything after it. Registered after the body parsers: their stream
 * callbacks run outside any context the request was given before them.
 */
export function enterRequestContext(req: Request, _res: Response, next: NextFunction): void {
  const context = contextOf(req);
  if (context === undefined) {
    next();
    return;
  }
  contexts.run(context, next);
}
