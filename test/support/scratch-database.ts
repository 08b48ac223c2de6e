import { DataSource } from 'typeorm';
import { Database } from '../../src/database/database.service';
import { openTestDataSource } from './test-data-source';

/**
 * The fresh test database of openTestDataSource (no app boot) with one queue table of the test's own:
 * `tenant_id`, `id`, `status` ('pending' by default), `payload` and the test's `columns`.
 */
export interface ScratchDatabase {
  dataSource: DataSource;
  /** The data layer on it, as the app builds it. */
  dataLayer: Database;
  /** Every row of the table deleted. */
  empty(): Promise<void>;
  /** `work` runs while another session's transaction holds row `id` locked (FOR UPDATE). */
  whileLocked(id: string, work: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

export async function scratchDatabase(table: string, columns: string): Promise<ScratchDatabase> {
  const opened = await openTestDataSource();
  const dataSource = opened.dataSource;
  await dataSource.query(
    `CREATE TABLE ${table} (tenant_id uuid NOT NULL, id uuid NOT NULL, status text NOT NULL DEFAULT 'pending',
       payload text NOT NULL, ${columns}, PRIMARY KEY (tenant_id, id))`,
  );
  return {
    dataSource,
    dataLayer: opened.dataLayer,
    empty: async () => void (await dataSource.query(`DELETE FROM ${table}`)),
    whileLocked: async (id, work) => {
      const runner = dataSource.createQueryRunner();
      await runner.connect();
      await runner.startTransaction();
      try {
        await runner.query(`SELECT 1 FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
        await work();
      } finally {
        await runner.rollbackTransaction();
        await runner.release();
      }
    },
    close: () => opened.close(),
  };
}
