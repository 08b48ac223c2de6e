import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { postgresUrl } from './databases';

/** A new, empty database for spawned servers and CLI runs: where the test run's DATABASE_URL points, else PGlite. */
export interface FreshStore {
  /** DATABASE_URL of a new PostgreSQL database, or DATA_DIR of a new embedded one; DATA_DIR always (dev files). */
  env: Record<string, string>;
  drop(): Promise<void>;
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

export async function freshStore(): Promise<FreshStore> {
  const dir = mkdtempSync(join(tmpdir(), 'tv-store-'));
  const url = postgresUrl();
  if (url === null) {
    return {
      env: { DATA_DIR: dir },
      drop: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
    };
  }
  const name = `tv_fresh_${process.pid}_${randomBytes(4).toString('hex')}`;
  await admin(url, `CREATE DATABASE ${name}`);
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
