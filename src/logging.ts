import { DynamicModule, Global, Injectable, Module } from '@nestjs/common';
import type { ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Logger, Params, PARAMS_PROVIDER_TOKEN, PinoLogger } from 'nestjs-pino';
import { pino, type DestinationStream, type Logger as Pino } from 'pino';
import { currentRequest, RequestContext } from './common/request-context';
import { AppConfig } from './config/app-config';
import { traceLogMixin } from './tracing/spans';

/** The app's pino logger: request lines and every line logged while a request is being served. */
export const APP_LOG = Symbol('APP_LOG');

/** `/tokens/<id>` in any case and with any repeated slashes, as Express routes it; `search` is a route. */
const TOKEN_ID_IN_PATH = /^(\/+tokens\/+)(?!search\/*$)[^/].*$/i;

/**
 * The path of a request as logged: a token id (which an alias expression derived from the data) is
 * replaced with `[id]`. Hashing it would not do: a card number's few unknown digits are quickly guessed.
 */
export function loggedPath(url: string): string {
  return url.split('?')[0].replace(TOKEN_ID_IN_PATH, '$1[id]');
}

/**
 * A 503 from /health/live or /health/ready is the probe's answer, not a fault: the cause (sealed, database
 * down, shutting down) is logged once where it is known, so an orchestrator probing every few seconds pages
 * no one.
 */
function isProbeAnswer(url: string, status: number): boolean {
  return status === 503 && /^\/+health\/+(live|ready)\/*(\?|$)/i.test(url);
}

/** An answer the error filter marked as a state the operator chose (ChosenStateError: a sealed vault). */
function isChosenState(res: ServerResponse): boolean {
  return (res as { locals?: { chosenState?: unknown } }).locals?.chosenState === true;
}

/**
 * A request as logged: an allow-list. Bodies are never logged, and query strings are dropped because list
 * filters (`metadata.<key>=`) and proxy keys (`bt-proxy-key=`) travel there. Of the headers only the user
 * agent, and whether a key was sent: secrets (BT-API-KEY, BT-PROXY-KEY, Authorization, cookies) never
 * reach a log line, so nothing is left to redact.
 */
function loggedRequest({ id, req }: RequestContext): Record<string, unknown> {
  return {
    id,
    method: req.method,
    path: loggedPath(req.originalUrl ?? req.url),
    headers: {
      'user-agent': req.headers['user-agent'],
      'bt-api-key': req.headers['bt-api-key'] === undefined ? 'none sent' : '[redacted]',
    },
  };
}

/**
 * JSON logs; a line logged while a request is served carries the request (`req`) it belongs to, and one
 * logged inside a span its trace_id and span_id (with OTEL_EXPORTER_OTLP_ENDPOINT only).
 */
export function appLog(config: AppConfig, stream?: DestinationStream): Pino {
  const trace = traceLogMixin();
  return pino(
    {
      level: config.logLevel,
      mixin: () => {
        const fields: Record<string, unknown> = trace === undefined ? {} : trace();
        const context = currentRequest();
        if (context !== undefined) {
          fields.req = loggedRequest(context);
        }
        return fields;
      },
    },
    stream,
  );
}

/**
 * The line of a served request, once it is answered or its connection closed: at error level for a 5xx
 * that is neither a probe's answer nor a state the operator chose. Response headers are not logged: on
 * /proxy they are the destination's, which may carry anything.
 */
export function logRequest(context: RequestContext): void {
  const { req, res, log, failure } = context;
  const status = res.statusCode;
  if (failure === undefined && status < 500 && !log.isLevelEnabled('info')) {
    return;
  }
  const fields = {
    req: loggedRequest(context),
    res: { statusCode: status },
    responseTime: Math.round(performance.now() - context.startedAt),
  };
  if (failure === undefined && status < 500) {
    log.info(fields, !req.readableAborted && res.writableEnded ? 'request completed' : 'request aborted');
    return;
  }
  const level = isProbeAnswer(req.originalUrl ?? req.url, status) || isChosenState(res) ? 'info' : 'error';
  log[level](
    { ...fields, err: failure ?? new Error(`failed with status code ${status}`) },
    'request errored',
  );
}

/** nestjs-pino's logger, writing through the logger of the request being served, if any. */
@Injectable()
class RequestPinoLogger extends PinoLogger {
  override get logger(): Pino {
    return currentRequest()?.log ?? super.logger;
  }
}

/** Nest's logger (app.useLogger) over the app's pino logger; no per-request middleware or child logger. */
@Global()
@Module({})
export class LoggingModule {
  static forRoot(config: AppConfig, stream?: DestinationStream): DynamicModule {
    const log = appLog(config, stream);
    const params: Params = { pinoHttp: { logger: log } };
    return {
      module: LoggingModule,
      providers: [
        { provide: APP_LOG, useValue: log },
        { provide: PARAMS_PROVIDER_TOKEN, useValue: params },
        { provide: PinoLogger, useClass: RequestPinoLogger },
        Logger,
      ],
      exports: [APP_LOG, Logger, PinoLogger],
    };
  }
}
