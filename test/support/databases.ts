import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { DatabaseRuntime, dataSourceOptions, openDatabase } from '../../src/database/database';
import { startEmbeddedPostgres } from '../../src/database/embedded-postgres';
import { loadConfig } from '../../src/config/app-config';
import { SCHEMA } from '../../src/entities';

/**
 * The migrated template every test file clones. Named per run (global setup sets it, workers inherit the
 * environment) so two runs on one server, such as two checkouts, never drop each other's template.
 */
export function templateDatabase(): string {
  const name = process.env.TV_TEMPLATE_DATABASE;
  if (name === undefined || !/^tv_template_[a-z0-9_]+$/.test(name)) {
    throw new Error('TV_TEMPLATE_DATABASE is set by test/support/global-setup.ts');
  }
  return name;
}

export function postgresUrl(): string | null {
  const url = process.env.DATABASE_URL;
  return url === undefined || url === '' ? null : url;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

async function admin<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Once per run: a migrated template database that every test file clones (PostgreSQL only). */
export async function createTemplateDatabase(url: string): Promise<void> {
  const template = `tv_template_${process.pid}_${randomBytes(3).toString('hex')}`;
  process.env.TV_TEMPLATE_DATABASE = template;
  await admin(url, (client) => client.query(`CREATE DATABASE ${template}`));
  const dataSource = new DataSource({
    ...dataSourceOptions({ url: withDatabase(url, template) }, 1, false),
    ...SCHEMA,
  });
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
}

/**
 * Once per run on the embedded database: a migrated PGlite, dumped to a file that every test file's database
 * starts from. Creating a PGlite cluster and migrating it costs seconds of CPU; loading the image, about one.
 */
export async function createEmbeddedTemplate(): Promise<void> {
  const existing = process.env.TV_EMBEDDED_TEMPLATE;
  if (existing !== undefined && existing !== '') {
    return; // a second project of the same run
  }
  const embedded = await startEmbeddedPostgres(null);
  try {
    const dataSource = new DataSource({ ...dataSourceOptions(embedded.connection, 1, false), ...SCHEMA });
    await dataSource.initialize();
    await dataSource.runMigrations({ transaction: 'each' });
    // The template databases are half the image's files and nothing here creates a database: without
    // them a test file's database loads in about 60 % of the CPU time.
    await dataSource.query(
      "UPDATE pg_database SET datistemplate = false WHERE datname IN ('template0', 'template1')",
    );
    await dataSource.query('DROP DATABASE template0');
    await dataSource.query('DROP DATABASE template1');
    await dataSource.query('CHECKPOINT');
    await dataSource.destroy();
    const path = join(tmpdir(), `tv-template-${process.pid}-${randomBytes(3).toString('hex')}.pgdata`);
    writeFileSync(path, Buffer.from(await (await embedded.dump()).arrayBuffer()), { mode: 0o600 });
    process.env.TV_EMBEDDED_TEMPLATE = path;
  } finally {
    await embedded.close();
  }
}

export function removeEmbeddedTemplate(): void {
  const path = process.env.TV_EMBEDDED_TEMPLATE;
  if (path !== undefined && path !== '') {
    rmSync(path, { force: true });
  }
}

/**
 * A fresh database for one test file: a clone of the migrated template on PostgreSQL, an in-memory PGlite
 * started from the migrated image otherwise (a new one, migrated at boot, when no global setup made it).
 */
export async function openTestDatabase(): Promise<DatabaseRuntime> {
  const url = postgresUrl();
  if (url === null) {
    const template = process.env.TV_EMBEDDED_TEMPLATE;
    const image = template === undefined || template === '' ? undefined : new Blob([readFileSync(template)]);
    return openDatabase(loadConfig({ LOG_LEVEL: 'silent' }), { inMemory: true, image });
  }
  const name = `tv_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(url, async (client) => {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${templateDatabase()}`);
    // A test database needs no crash durability: its commits do not wait for the disk sync (2 ms each on
    // these machines, the largest part of the suite's time on PostgreSQL). What other sessions see, and
    // when, is unchanged; the fault tests run servers of their own.
    await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  return {
    options: dataSourceOptions({ url: withDatabase(url, name) }, 10, true),
    embedded: false,
    close: () =>
      admin(url, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(
        () => undefined,
      ),
  };
}
