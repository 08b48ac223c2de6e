/**
 * The data source for the TypeORM CLI (`npx typeorm migration:show -d dist/ormconfig.js`, and
 * `npm run migration:generate`). It needs DATABASE_URL: the TypeORM CLI cannot start the embedded database.
 * For the embedded database (and for PostgreSQL too) apply migrations with `npm run migration:run`, which
 * runs `npm run cli -- migrate`; the service also applies them at boot unless MIGRATIONS_RUN=false.
 */
import { DataSource } from 'typeorm';
import { loadConfig } from './src/config/app-config';
import { dataSourceOptions } from './src/database/database';
import { pgSsl } from './src/database/tls';
import { SCHEMA } from './src/entities';

const config = loadConfig();
if (config.databaseUrl === null) {
  throw new Error(
    'ormconfig: DATABASE_URL is not set. The TypeORM CLI works on PostgreSQL only; ' +
      'for the embedded database use `npm run migration:run`.',
  );
}

export default new DataSource({
  ...dataSourceOptions({ url: config.databaseUrl }, 1, false, undefined, 0, pgSsl(config.databaseTls)),
  ...SCHEMA,
});
