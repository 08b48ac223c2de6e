import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppConfig } from './config/app-config';
import { traceLogMixin } from './tracing/spans';

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
function isProbeAnswer(req: IncomingMessage, status: number): boolean {
  return status === 503 && /^\/+health\/+(live|ready)\/*(\?|$)/i.test(req.url ?? '');
}

/** An answer the error filter marked as a state the operator chose (ChosenStateError: a sealed vault). */
function isChosenState(res: ServerResponse): boolean {
  return (res as { locals?: { chosenState?: unknown } }).locals?.chosenState === true;
}

/**
 * JSON logs with a request id. Bodies are never logged, and query strings are dropped because list
 * filters (`metadata.<key>=`) and proxy keys (`bt-proxy-key=`) travel there.
 */
export function loggerOptions(config: AppConfig, stream?: DestinationStream): Params {
  return {
    pinoHttp: {
      level: config.logLevel,
      stream,
      // trace_id and span_id on every line logged inside a span (with OTEL_EXPORTER_OTLP_ENDPOINT only).
      mixin: traceLogMixin(),
      genReqId: (req: IncomingMessage, res: ServerResponse) => {
        const incoming = req.headers['bt-trace-id'];
        const id = typeof incoming === 'string' && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
        res.setHeader('BT-TRACE-ID', id);
        return id;
      },
      serializers: {
        // Response headers are not logged: on /proxy they are the destination's, which may carry anything.
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
        // An allow-list: of the headers only the user agent, and whether a key was sent. Secrets (BT-API-KEY,
        // BT-PROXY-KEY, Authorization, cookies) never reach the log line, so nothing is left to redact; pino's
        // redaction ran on every request (the request's child logger) and cost more than a reveal's cipher.
        req: (req: { id: string; method: string; url: string; headers: Record<string, unknown> }) => ({
          id: req.id,
          method: req.method,
          path: loggedPath(req.url),
          // Whether a key was sent, never the key.
          headers: {
            'user-agent': req.headers['user-agent'],
            'bt-api-key': req.headers['bt-api-key'] === undefined ? 'none sent' : '[redacted]',
          },
        }),
      },
      customLogLevel: (req, res, err) =>
        (err !== undefined || res.statusCode >= 500) &&
        !isProbeAnswer(req, res.statusCode) &&
        !isChosenState(res)
          ? 'error'
          : 'info',
    },
  };
}
