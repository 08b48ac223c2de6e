import { DataSourceOptions } from 'typeorm';
import { join } from 'node:path';
import { AppConfig } from '../config/app-config';
import { startEmbeddedPostgres } from './embedded-postgres';
import { preflight } from './preflight';
import { vaultTypes } from './timestamptz';
import { PgSsl, pgSsl } from './tls';

export interface DatabaseRuntime {
  options: DataSourceOptions;
  embedded: boolean;
  /** The change listeners' connection (DATABASE_LISTEN_URL); the pooled one's URL when not set. */
  listenUrl?: string;
  close(): Promise<void>;
}

/**
 * Connection options shared by PostgreSQL and the embedded PGlite, one code path. The schema (entities and
 * migrations of every module) is not known here: the top of the application adds it (src/entities.ts). With
 * `connectTimeoutMs`, getting a connection (a free one from the pool, or a new one) fails after that long,
 * so a request during a database outage answers 503 instead of waiting for the operating system's timeout.
 * With `statementTimeoutMs`, PostgreSQL cancels a statement running longer (57014, answered 503).
 * `ssl` is pgSsl(DATABASE_SSL_MODE...) for PostgreSQL; the embedded database is plain (a local socket).
 */
export function dataSourceOptions(
  connection: Partial<{ url: string; host: string; port: number; user: string; database: string }>,
  poolSize: number,
  migrationsRun: boolean,
  connectTimeoutMs?: number,
  statementTimeoutMs = 0,
  ssl: PgSsl = false,
): DataSourceOptions {
  return {
    type: 'postgres',
    ssl,
    ...(connection.url !== undefined
      ? { url: connection.url }
      : {
          host: connection.host,
          port: connection.port,
          username: connection.user,
          database: connection.database,
        }),
    migrationsRun,
    migrationsTransactionMode: 'each',
    synchronize: false,
    uuidExtension: 'pgcrypto',
    installExtensions: false,
    extra: {
      max: poolSize,
      idleTimeoutMillis: 30000,
      types: vaultTypes,
      ...(connectTimeoutMs === undefined ? {} : { connectionTimeoutMillis: connectTimeoutMs }),
      // Sent when each connection starts: one slow statement cannot hold a pooled connection indefinitely.
      ...(statementTimeoutMs > 0 ? { statement_timeout: statementTimeoutMs } : {}),
    },
    logging: false,
  };
}

/**
 * Opens the configured database: PostgreSQL when DATABASE_URL is set, else embedded PGlite under DATA_DIR
 * (in memory with `inMemory`, then started from `image`, a dump of another embedded database, when given).
 */
export async function openDatabase(
  config: AppConfig,
  opts: { inMemory?: boolean; image?: Blob } = {},
): Promise<DatabaseRuntime> {
  if (config.databaseUrl !== null) {
    await preflight(config.databaseUrl, config.databaseTls, config.databaseConnectTimeoutMs);
    return {
      options: dataSourceOptions(
        { url: config.databaseUrl },
        config.databasePoolSize,
        config.migrationsRun,
        config.databaseConnectTimeoutMs,
        config.databaseStatementTimeoutMs,
        pgSsl(config.databaseTls),
      ),
      embedded: false,
      listenUrl: config.databaseListenUrl ?? config.databaseUrl,
      close: async () => {},
    };
  }
  const embedded = await startEmbeddedPostgres(
    opts.inMemory === true ? null : join(config.dataDir, 'db'),
    opts.image,
  );
  const options = dataSourceOptions(embedded.connection, 1, config.migrationsRun);
  // PGlite is one session: keep the one connection open rather than racing a reconnect after idling. It
  // lives in this process, so it has no outage to time out of, and waiting for its one connection is normal.
  return {
    options: { ...options, extra: { max: 1, idleTimeoutMillis: 0 } },
    embedded: true,
    close: () => embedded.close(),
  };
}
