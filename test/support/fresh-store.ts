import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { postgresUrl, templateDatabase } from './databases';

/** A new database of its own for spawned servers and CLI runs (empty unless `migrated`): where the test run's DATABASE_URL points, else PGlite. */
export interface FreshStore {
  /** DATABASE_URL of a new PostgreSQL database, or DATA_DIR of a new embedded one; DATA_DIR always (dev files). */
  env: Record<string, string>;
  drop(): Promise<void>;
}

export interface FreshStoreOptions {
  /**
   * Start from the run's migrated template (global setup) instead of an empty database, so the first boot finds
   * the schema in place. Migrating from nothing costs a vault's first boot tens of seconds on a busy machine
   * (PGlite most); a test that is not about migrations needs none of it.
   */
  migrated?: boolean;
}

async function admin(url: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/**
 * Writes the run's migrated embedded image to where a vault or CLI with DATA_DIR=`dir` keeps its embedded
 * database: the data folder of a vault that has been started once, and stopped.
 */
export function seedEmbedded(dir: string): void {
  const template = process.env.TV_EMBEDDED_TEMPLATE;
  if (template === undefined || template === '') {
    throw new Error('TV_EMBEDDED_TEMPLATE is set by test/support/global-setup.ts');
  }
  // The image is a tar of the cluster's folder (PGlite's dump): unpacked where PGlite keeps it, it opens as is,
  // at the cost of writing the files (no PGlite started here).
  const pgdata = join(dir, 'db', 'pgdata');
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  execFileSync('tar', ['-xf', template, '-C', pgdata], { stdio: ['ignore', 'ignore', 'pipe'] });
}

export async function freshStore(options: FreshStoreOptions = {}): Promise<FreshStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tv-store-'));
  const url = postgresUrl();
  if (url === null) {
    if (options.migrated === true) {
      seedEmbedded(dir);
    }
    return {
      env: { DATA_DIR: dir },
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `tv_fresh_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(
    url,
    `CREATE DATABASE ${name}${options.migrated === true ? ` TEMPLATE ${templateDatabase()}` : ''}`,
  );
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return {
    env: { DATA_DIR: dir, DATABASE_URL: parsed.toString() },
    drop: async () => {
      await admin(url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
