import type { PoolClient } from 'pg';
import { Logger } from '@nestjs/common';
import { EntityManager, QueryFailedError } from 'typeorm';
import { databaseUnavailable } from '../common/database-unavailable';

/**
 * Runs one of the hot, fixed statements as a named prepared statement: each pooled connection parses and plans
 * it once instead of on every request (the embedded database does that work on the request thread). A name
 * stands for one text. Uses the manager's transaction when it has one; a failed statement throws TypeORM's
 * QueryFailedError, as `manager.query` does.
 *
 * With `named` false (DATABASE_PREPARED_STATEMENTS=false) the statement is sent unnamed, parsed every time:
 * a pooler in transaction mode hands each transaction another server connection, where a statement this
 * connection prepared does not exist. Left on there by mistake, the first such error (26000: the statement
 * does not exist here; 42P05: another client's statement of that name does) turns named statements off for
 * the process with one warning, and that request answers 503 so its retry goes through unnamed.
 */
export async function preparedQuery<T extends object>(
  manager: EntityManager,
  name: string,
  text: string,
  values: unknown[],
  named = true,
): Promise<T[]> {
  const runner = manager.queryRunner ?? manager.connection.createQueryRunner();
  try {
    const client = (await runner.connect()) as PoolClient;
    try {
      const useName = named && !pooledSessions;
      const statement = useName
        ? { name: `${name}#${connectionNumber(client)}`, text, values }
        : { text, values };
      return (await client.query<T>(statement)).rows;
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (named && (code === '26000' || code === '42P05')) {
        if (!pooledSessions) {
          pooledSessions = true;
          new Logger('Database').warn(
            `named prepared statements fail here (${String(code)}: a pooler in transaction mode?); sending them unnamed from now on. Set DATABASE_PREPARED_STATEMENTS=false.`,
          );
        }
        // Also for a statement sent named just before the switch: its retry goes unnamed.
        throw databaseUnavailable();
      }
      throw new QueryFailedError(text, values, err as Error);
    }
  } finally {
    if (runner !== manager.queryRunner) {
      await runner.release();
    }
  }
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
