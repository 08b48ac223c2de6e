import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { openDatabase } from '../database/database';
import { SCHEMA } from '../entities';
import { assertEmbeddedDatabaseFree, Command, out, parse } from './kit';

async function migrate(args: string[], config: AppConfig): Promise<void> {
  parse(args, {});
  await assertEmbeddedDatabaseFree(config);
  const database = await openDatabase({ ...config, migrationsRun: false });
  const dataSource = new DataSource({ ...database.options, ...SCHEMA });
  try {
    await dataSource.initialize();
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    const where = database.embedded ? `Embedded database in ${config.dataDir}` : 'PostgreSQL';
    const total = dataSource.migrations.length;
    out(
      applied.length === 0
        ? `${where}: the schema is up to date (${total} migration${total === 1 ? '' : 's'}).`
        : `${where}: applied ${applied.map((m) => m.name).join(', ')}.`,
    );
  } finally {
    if (dataSource.isInitialized) {
      await dataSource.destroy();
    }
    await database.close();
  }
}

export const migrateCommand: Command = {
  usage: 'migrate',
  summary: 'Apply pending database migrations (the service also applies them at boot).',
  run: migrate,
};
