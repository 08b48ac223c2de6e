import { types } from 'node:util';
import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { ApiError } from './api-error';

/**
 * How long a client is asked to wait after a 503 of a database outage. A managed PostgreSQL fails over in
 * 10 to 30 seconds: a few retries fit in that, without a crowd of clients hammering a database that is
 * just coming back.
 */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** Socket errors of a database connection that could not be made or was lost. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // DNS failing or flipping during a failover (a managed database's name moves to the new primary).
  'EAI_AGAIN',
  'ENOTFOUND',
]);

/**
 * SQLSTATEs that say the session is gone or cannot start, not that the statement was wrong: 57P01-57P03
 * admin shutdown, crash shutdown, cannot connect now (starting up, shutting down, in recovery), 57P05 an
 * idle session ended by the server, 53300 too many connections, 57014 a statement cancelled by
 * DATABASE_STATEMENT_TIMEOUT_MS (a database too slow to answer now), 25006 a write on a server still
 * read-only: in a failover Patroni's health check passes (and HAProxy sends connections) as soon as the
 * node takes the leader lock, a moment before its promotion ends. Class 08 is matched as a whole.
 */
const SESSION_STATES = new Set(['57P01', '57P02', '57P03', '57P05', '53300', '57014', '25006']);

/** The fixed texts pg and pg-pool give a lost or timed-out connection; they never quote data. */
const CONNECTION_MESSAGES = [
  /^Connection terminated( unexpectedly| due to connection timeout)?$/,
  /^timeout exceeded when trying to connect$/,
  /^Client has encountered a connection error and is not queryable$/,
  /^Client was closed and is not queryable$/,
];

/**
 * Why `err` means the database could not be reached (refused, reset, timed out, shut down, full), as a
 * code or pg's fixed text, safe to log; null when it is something else, such as a statement that failed.
 * Looks through TypeORM's QueryFailedError, `cause`, and the AggregateError Node raises when every
 * address of a host refused.
 */
export function connectionFailure(err: unknown, depth = 0): string | null {
  // isNativeError: socket errors come from Node's own realm, which under Jest is not this module's Error.
  if (!(err instanceof Error || types.isNativeError(err)) || err instanceof ApiError || depth > 3) {
    return null;
  }
  // TypeORM releases a transaction's runner when its connection fails: the next statement throws these.
  if (
    err instanceof QueryRunnerAlreadyReleasedError ||
    err instanceof QueryRunnerProviderAlreadyReleasedError
  ) {
    return err.name;
  }
  const { code, errors } = err as { code?: unknown; errors?: unknown };
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SESSION_STATES.has(code) || /^08/.test(code))) {
    return code;
  }
  if (CONNECTION_MESSAGES.some((pattern) => pattern.test(err.message))) {
    return err.message;
  }
  const inner: unknown[] = [err.cause];
  if (err instanceof QueryFailedError) {
    inner.push(err.driverError);
  }
  if (Array.isArray(errors)) {
    inner.push(...(errors as unknown[]));
  }
  for (const e of inner) {
    const cause = connectionFailure(e, depth + 1);
    if (cause !== null) {
      return cause;
    }
  }
  return null;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  return connectionFailure(err) !== null;
}

/** The answer while the database cannot be reached: 503 with Retry-After, in the common error format. */
export function databaseUnavailable(): ApiError {
  return new ApiError(503, 'The database is not available right now: try again shortly.', undefined, {
    'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
  });
}

/** The headers an error's answer carries (Retry-After on a 429 or a lost database), wherever it is rendered. */
export function errorHeaders(err: unknown): Record<string, string> {
  if (err instanceof ApiError) {
    return err.headers;
  }
  return isDatabaseUnavailable(err) ? databaseUnavailable().headers : {};
}
