import type { Pool, PoolClient, QueryConfig, QueryResult } from 'pg';
import { Logger } from '@nestjs/common';
import { QueryFailedError, QueryRunner } from 'typeorm';
import { databaseUnavailable } from '../common/database-unavailable';

/**
 * Sends one statement on `runner`'s connection (the open transaction's) and answers as `pg` answers, rows and
 * the count of rows touched, whatever the statement. A statement with a name, `named` true, is one of the hot,
 * fixed statements, sent as a named prepared statement: each pooled connection parses and plans it once
 * instead of on every request (the embedded database does that work on the request thread). A name stands for
 * one text. A failed statement throws TypeORM's QueryFailedError, as `manager.query` does.
 *
 * With `named` false (DATABASE_PREPARED_STATEMENTS=false) the statement is sent unnamed, parsed every time:
 * a pooler in transaction mode hands each transaction another server connection, where a statement this
 * connection prepared does not exist. Left on there by mistake, the first such error (26000: the statement
 * does not exist here; 42P05: another client's statement of that name does) turns named statements off for
 * the process with one warning, and that request answers 503 so its retry goes through unnamed.
 */
export async function sendStatement<T extends object>(
  runner: QueryRunner,
  statement: Statement,
  named: boolean,
): Promise<QueryResult<T>> {
  return sendOn<T>((await runner.connect()) as PoolClient, statement, named);
}

/**
 * sendStatement() on a connection of its own from `pool`, in no transaction, given back once answered: no
 * TypeORM query runner for one statement. A connection that fails meanwhile leaves the pool, as it does
 * from a query runner.
 */
export async function sendPooled<T extends object>(
  pool: Pool,
  statement: Statement,
  named: boolean,
): Promise<QueryResult<T>> {
  const client = await pool.connect();
  let broken: Error | undefined;
  const onError = (err: Error): void => {
    broken = err;
  };
  client.on('error', onError);
  try {
    return await sendOn<T>(client, statement, named);
  } finally {
    client.removeListener('error', onError);
    client.release(broken);
  }
}

async function sendOn<T extends object>(
  client: PoolClient,
  statement: Statement,
  named: boolean,
): Promise<QueryResult<T>> {
  try {
    return await client.query<T>(statementFor(client, statement, named));
  } catch (err) {
    throw failure(err, statement.text, statement.values ?? [], named && statement.name !== undefined);
  }
}

/** A statement for `pipelined`: without a name or values it goes as a simple query (BEGIN, COMMIT). */
export interface Statement {
  name?: string;
  text: string;
  values?: unknown[];
}

/**
 * Sends `statements` on `runner`'s connection one after the other without waiting for each answer (pg's
 * pipeline mode): one round trip for all of them. Each is still its own statement, run in order; inside a
 * transaction a failed one aborts it, so the ones behind it fail too (a COMMIT then answers ROLLBACK).
 * Resolves to each statement's rows once all have answered, or rejects with the first failure. A statement
 * with a name is prepared as sendStatement does (leave it out where DATABASE_PREPARED_STATEMENTS=false).
 */
export async function pipelined(runner: QueryRunner, statements: Statement[]): Promise<object[][]> {
  const client = (await runner.connect()) as PoolClient & { pipeline: boolean };
  const before = client.pipeline;
  client.pipeline = true;
  let answers: PromiseSettledResult<QueryResult<object>>[];
  try {
    answers = await Promise.allSettled(
      statements.map((statement) =>
        statement.name === undefined && statement.values === undefined
          ? client.query<object>(statement.text)
          : client.query<object>(statementFor(client, statement, true)),
      ),
    );
  } finally {
    client.pipeline = before;
  }
  const failed = answers.findIndex((answer) => answer.status === 'rejected');
  if (failed >= 0) {
    const { name, text, values = [] } = statements[failed];
    throw failure((answers[failed] as PromiseRejectedResult).reason, text, values, name !== undefined);
  }
  return answers.map((answer) => (answer as PromiseFulfilledResult<QueryResult<object>>).value.rows);
}

function statementFor(
  client: PoolClient,
  { name, text, values = [] }: Statement,
  named: boolean,
): QueryConfig {
  return named && !pooledSessions && name !== undefined
    ? { name: `${name}#${connectionNumber(client)}`, text, values }
    : { text, values };
}

/** What a failed statement throws: TypeORM's QueryFailedError, or a 503 once named statements turn out refused. */
function failure(err: unknown, text: string, values: unknown[], named: boolean): Error {
  const code = (err as { code?: unknown }).code;
  if (named && (code === '26000' || code === '42P05')) {
    if (!pooledSessions) {
      pooledSessions = true;
      new Logger('Database').warn(
        `named prepared statements fail here (${String(code)}: a pooler in transaction mode?); sending them unnamed from now on. Set DATABASE_PREPARED_STATEMENTS=false.`,
      );
    }
    // Also for a statement sent named just before the switch: its retry goes unnamed.
    return databaseUnavailable();
  }
  return new QueryFailedError(text, values, err as Error);
}

/**
 * Statement names are per connection: the embedded database is one session that outlives its connections, so a
 * new connection must not prepare a name that an earlier one already prepared there.
 */
const connectionNumbers = new WeakMap<PoolClient, number>();
/** Set once named statements failed as they do behind a pooler: the process sends them unnamed since. */
let pooledSessions = false;
let connections = 0;

function connectionNumber(client: PoolClient): number {
  let number = connectionNumbers.get(client);
  if (number === undefined) {
    number = ++connections;
    connectionNumbers.set(client, number);
  }
  return number;
}
