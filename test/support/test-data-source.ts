import { DataSource } from 'typeorm';
import { DatabaseRuntime } from '../../src/database/database';
import { Database } from '../../src/database/database.service';
import { Transactions } from '../../src/database/transactions';
import { SCHEMA } from '../../src/entities';
import { openTestDatabase } from './databases';

/**
 * A migrated database without the application: for service tests that construct their service with its
 * real dependencies (`new Service(...)`) instead of booting Nest. The same fresh database a TestContext
 * gets (a template clone on PostgreSQL, an in-memory PGlite migrated here otherwise).
 */
export interface TestDataSource {
  dataSource: DataSource;
  database: DatabaseRuntime;
  /** The data layer on it, as the app builds it (named prepared statements on). */
  dataLayer: Database;
  /** A tenant row, inserted directly, for tests whose subject only needs a tenant to exist. */
  insertTenant(name?: string): Promise<string>;
  close(): Promise<void>;
}

export async function openTestDataSource(): Promise<TestDataSource> {
  const database = await openTestDatabase();
  const dataSource = new DataSource({ ...database.options, ...SCHEMA });
  try {
    await dataSource.initialize();
  } catch (err) {
    await database.close();
    throw err;
  }
  return {
    dataSource,
    database,
    dataLayer: new Database(dataSource, new Transactions(dataSource), { databasePreparedStatements: true }),
    insertTenant: async (name = 'Acme') => {
      const [{ id }]: { id: string }[] = await dataSource.query(
        'INSERT INTO tenants (id, name) VALUES (gen_random_uuid(), $1) RETURNING id',
        [name],
      );
      return id;
    },
    close: async () => {
      await dataSource.destroy();
      await database.close();
    },
  };
}
