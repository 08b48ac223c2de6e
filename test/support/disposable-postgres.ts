import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { freePort } from './spawned-server';

const run = promisify(execFile);

/** PostgreSQL's server binaries (initdb, pg_ctl): Debian keeps them per major version. */
export function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0) {
    throw new Error(
      'PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)',
    );
  }
  return join(root, versions[0], 'bin');
}

/** PostgreSQL refuses to run as root: as root, the server runs as the `postgres` system user. */
export async function asServerUser(command: string, args: string[]): Promise<void> {
  const root = process.getuid?.() === 0;
  const [file, argv] = root ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  await run(file, argv, { timeout: 60_000 });
}

/**
 * A PostgreSQL server of its own for a fault test: created in a temp folder on a free 127.0.0.1 port, so a
 * test can stop, kill and restart it without touching the shared server the rest of the suite uses.
 */
export class DisposablePostgres {
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  /** initdb (trust auth, user postgres) and start; the vault migrates its database at boot. */
  static async start(): Promise<DisposablePostgres> {
    const dir = mkdtempSync(join(tmpdir(), 'tv-pg-'));
    if (process.getuid?.() === 0) {
      const { uid, gid } = await serverUser();
      chownSync(dir, uid, gid);
    }
    const server = new DisposablePostgres(dir, await freePort());
    await asServerUser(join(binDir(), 'initdb'), [
      '-D',
      server.dataDir,
      '-A',
      'trust',
      '-U',
      'postgres',
      '-E',
      'UTF8',
    ]);
    await server.resume();
    return server;
  }

  get dataDir(): string {
    return join(this.dir, 'data');
  }

  /** The database `postgres` on this server. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /** Starts (again) on the same port and data, waiting until it accepts connections. */
  async resume(): Promise<void> {
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off`;
    await asServerUser(join(binDir(), 'pg_ctl'), [
      '-D',
      this.dataDir,
      '-o',
      options,
      '-l',
      join(this.dir, 'log'),
      '-w',
      'start',
    ]);
  }

  /**
   * Stops the server: `fast` ends sessions cleanly (a planned restart), `immediate` drops them at once
   * without a shutdown checkpoint (a crash or a failover, as a client sees it).
   */
  async pause(mode: 'fast' | 'immediate' = 'immediate'): Promise<void> {
    await asServerUser(join(binDir(), 'pg_ctl'), ['-D', this.dataDir, '-m', mode, '-w', 'stop']);
  }

  /** Ends every other session, as a pooler restart or a failover does, while the server stays up. */
  async killConnections(): Promise<number> {
    const client = new Client({ connectionString: this.url });
    await client.connect();
    try {
      const result = await client.query(
        'SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = $1',
        ['client backend'],
      );
      return (result.rows[0] as { n: number }).n;
    } finally {
      await client.end();
    }
  }

  /** Stops the server (if running) and deletes its files. */
  async destroy(): Promise<void> {
    await this.pause('immediate').catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function serverUser(): Promise<{ uid: number; gid: number }> {
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ]);
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) };
}
