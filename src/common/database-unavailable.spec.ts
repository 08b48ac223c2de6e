import { BadRequestException } from '@nestjs/common';
import { runInNewContext } from 'node:vm';
import {
  QueryFailedError,
  QueryRunnerAlreadyReleasedError,
  QueryRunnerProviderAlreadyReleasedError,
} from 'typeorm';
import { ApiError } from './api-error';
import {
  connectionFailure,
  DATABASE_RETRY_AFTER_SECONDS,
  databaseUnavailable,
  isDatabaseUnavailable,
} from './database-unavailable';
import { toProblem } from './to-problem';

const SECRET = '4111111111111111';

function withCode(code: string, message = `failed near ${SECRET}`): Error {
  return Object.assign(new Error(message), { code });
}

/** How TypeORM reports a statement whose connection failed: the pg error as `driverError`. */
function failedQuery(driverError: Error): QueryFailedError {
  return new QueryFailedError(`INSERT ... '${SECRET}'`, [SECRET], driverError);
}

describe('isDatabaseUnavailable', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'EPIPE',
    'EHOSTUNREACH',
    'ENETUNREACH',
    'EAI_AGAIN',
    'ENOTFOUND',
  ])('recognises the socket error %s', (code) => {
    expect(connectionFailure(withCode(code))).toBe(code);
  });

  it.each([
    ['57P01', 'terminating connection due to administrator command'],
    ['57P02', 'terminating connection because of crash of another server process'],
    ['57P03', 'the database system is starting up'],
    ['57P05', 'terminating connection due to idle-session timeout'],
    ['53300', 'sorry, too many clients already'],
    ['25006', 'cannot execute INSERT in a read-only transaction'],
    ['08006', 'connection failure'],
    ['08001', 'could not connect'],
    ['08P01', 'protocol violation'],
  ])('recognises SQLSTATE %s (%s), also inside a QueryFailedError', (code, message) => {
    expect(connectionFailure(withCode(code, message))).toBe(code);
    expect(connectionFailure(failedQuery(withCode(code, message)))).toBe(code);
  });

  it.each([
    'Connection terminated unexpectedly',
    'Connection terminated',
    'Connection terminated due to connection timeout',
    'timeout exceeded when trying to connect',
    'Client has encountered a connection error and is not queryable',
    'Client was closed and is not queryable',
  ])('recognises the pg text "%s"', (message) => {
    expect(isDatabaseUnavailable(new Error(message))).toBe(true);
    expect(isDatabaseUnavailable(failedQuery(new Error(message)))).toBe(true);
  });

  it("recognises TypeORM's errors for a transaction whose connection failed and was released", () => {
    expect(isDatabaseUnavailable(new QueryRunnerAlreadyReleasedError())).toBe(true);
    expect(isDatabaseUnavailable(new QueryRunnerProviderAlreadyReleasedError())).toBe(true);
  });

  it('looks into `cause` and into the AggregateError of a host with several addresses', () => {
    const timedOut = new Error('Connection terminated due to connection timeout', {
      cause: withCode('ETIMEDOUT'),
    });
    expect(isDatabaseUnavailable(timedOut)).toBe(true);
    const everyAddress = new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'connect');
    expect(connectionFailure(everyAddress)).toBe('ECONNREFUSED');
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: failedQuery(withCode('57P01')) }))).toBe(true);
  });

  it('counts a statement cancelled by DATABASE_STATEMENT_TIMEOUT_MS as a database too slow to answer now', () => {
    const cancelled = failedQuery(withCode('57014', 'canceling statement due to statement timeout'));
    expect(connectionFailure(cancelled)).toBe('57014');
  });

  it('leaves statement errors, other errors and look-alike texts alone', () => {
    for (const err of [
      failedQuery(withCode('23505')),
      failedQuery(withCode('22P02')),
      failedQuery(withCode('42P01')),
      failedQuery(withCode('40001')),
      withCode('EACCES'),
      new Error(`boom ${SECRET}`),
      new Error('Connection terminated by the tenant code'),
      new Error('timeout exceeded when trying to connect to https://example.com'),
      new BadRequestException(),
      new ApiError(502, 'The destination refused the connection.'),
      Object.assign(new ApiError(502, 'upstream'), { code: 'ECONNREFUSED' }),
      'ECONNREFUSED',
      { code: 'ECONNREFUSED' },
      null,
      undefined,
    ]) {
      expect(isDatabaseUnavailable(err)).toBe(false);
    }
  });

  it("recognises an error made in another realm (Node's sockets under Jest)", () => {
    const foreign: unknown = runInNewContext(
      "Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' })",
    );
    expect(foreign instanceof Error).toBe(false);
    expect(connectionFailure(foreign)).toBe('ECONNREFUSED');
  });

  it('does not follow a cycle of causes for ever', () => {
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});

describe('the answer to a lost database', () => {
  it('is a 503 problem with Retry-After that quotes nothing of the error', () => {
    const error = databaseUnavailable();
    expect(error.status).toBe(503);
    expect(error.headers).toEqual({ 'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS) });
    const body = toProblem(failedQuery(new Error('Connection terminated unexpectedly')));
    expect(body).toEqual({
      type: 'https://www.rfc-editor.org/rfc/rfc9110#status.503',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The database is not available right now: try again shortly.',
    });
    expect(toProblem(withCode('ECONNREFUSED'))).toEqual(body);
    expect(JSON.stringify(toProblem(failedQuery(withCode('57P01'))))).not.toContain(SECRET);
  });

  it('leaves the mapping of other errors as it was', () => {
    expect(toProblem(failedQuery(withCode('23505')))).toMatchObject({ status: 409 });
    expect(toProblem(new Error('boom'))).toMatchObject({ status: 500 });
    expect(toProblem(new ApiError(503, 'The sandbox is busy: try again shortly.'))).toMatchObject({
      status: 503,
      detail: 'The sandbox is busy: try again shortly.',
    });
  });
});
