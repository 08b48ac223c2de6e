import { Injectable } from '@nestjs/common';
import { Database } from '../database/database.service';

/** The statements of the readiness checks. */
@Injectable()
export class HealthRepository {
  constructor(private readonly db: Database) {}

  /** Resolves when the database answers a statement. */
  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /** The names of the migrations applied; rejects (42P01) on a database never migrated. */
  async appliedMigrations(): Promise<string[]> {
    const table = this.db.source.options.migrationsTableName ?? 'migrations';
    const rows = await this.db.query<{ name: string }>(`SELECT name FROM "${table}"`);
    return rows.map((row) => row.name);
  }
}
