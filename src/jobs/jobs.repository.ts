import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.service';

/** The statements of the scheduled jobs themselves: the replicas' lock, and the token tables' statistics. */
@Injectable()
export class JobsRepository {
  constructor(private readonly db: Database) {}

  /**
   * Runs `work` while this process holds PostgreSQL's advisory lock `name`; false at once when another
   * holds it. The lock belongs to a transaction left open on a connection of its own for the work's
   * duration, not to the session: behind a pooler in transaction mode a session lock would stay on
   * whichever server connection took it, and its unlock would go to another. The work's own statements do
   * not join that transaction.
   */
  whileLocked(name: string, work: () => Promise<boolean>): Promise<boolean> {
    return this.db.onOwnConnection(async (connection) => {
      await connection.query('START TRANSACTION');
      try {
        const [{ locked }] = await connection.query<{ locked: boolean }>(
          'SELECT pg_try_advisory_xact_lock(hashtext($1)) AS locked',
          [name],
        );
        return locked && (await work());
      } finally {
        // Ends the transaction and with it the lock; a connection lost meanwhile took both with it.
        await connection.query('ROLLBACK').catch(() => undefined);
      }
    });
  }

  /** ANALYZE the token tables; with `vacuum` also VACUUM them (dead rows of updates and purges). */
  async analyzeTokenTables(vacuum: boolean): Promise<void> {
    // VACUUM refuses to run in a transaction block: outside one, the statement is sent alone.
    await this.db.execute(
      vacuum ? 'VACUUM (ANALYZE) tokens, token_search_indexes' : 'ANALYZE tokens, token_search_indexes',
    );
  }
}
