import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { asServerUser, serverUser } from './disposable-postgres';
import { freePort } from './spawned-server';

const run = promisify(execFile);
const BINARY = '/usr/sbin/pgbouncer';

/** Whether Debian's pgbouncer is installed (.ci/run installs it). */
export function pgbouncerInstalled(): boolean {
  return existsSync(BINARY);
}

/**
 * A PgBouncer of its own in front of a test PostgreSQL server on 127.0.0.1: transaction pooling, as most
 * managed setups run it, so a client's consecutive transactions may land on different server connections.
 */
export class PgBouncer {
  private constructor(
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(serverPort: number, poolSize = 4): Promise<PgBouncer> {
    const dir = mkdtempSync(join(tmpdir(), 'tv-pgbouncer-'));
    const bouncer = new PgBouncer(dir, await freePort());
    writeFileSync(join(dir, 'users.txt'), '"postgres" ""\n');
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=127.0.0.1 port=${serverPort}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${bouncer.port}`,
        'unix_socket_dir =',
        'auth_type = trust',
        `auth_file = ${join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        `default_pool_size = ${poolSize}`,
        'max_client_conn = 200',
        // The vault sends statement_timeout at connect (DATABASE_STATEMENT_TIMEOUT_MS): see the README.
        'ignore_startup_parameters = extra_float_digits,options,statement_timeout',
        `logfile = ${join(dir, 'log')}`,
        `pidfile = ${join(dir, 'pid')}`,
        '',
      ].join('\n'),
    );
    if (process.getuid?.() === 0) {
      // PgBouncer refuses to run as root, like PostgreSQL.
      const { uid, gid } = await serverUser();
      for (const file of ['', 'users.txt', 'pgbouncer.ini']) {
        chownSync(join(dir, file), uid, gid);
      }
    }
    await asServerUser(BINARY, ['-d', join(dir, 'pgbouncer.ini')]);
    await bouncer.waitUntilServing();
    return bouncer;
  }

  /** The database `postgres` through the pooler. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async stop(): Promise<void> {
    const pidFile = join(this.dir, 'pid');
    if (existsSync(pidFile)) {
      const pid = Number(readFileSync(pidFile, 'utf8').trim());
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // Already gone.
      }
      await run('sh', ['-c', `while kill -0 ${pid} 2>/dev/null; do sleep 0.05; done`], { timeout: 10_000 });
    }
    rmSync(this.dir, { recursive: true, force: true });
  }

  private async waitUntilServing(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const client = new Client({ connectionString: this.url });
      try {
        await client.connect();
        await client.query('SELECT 1');
        return;
      } catch (err) {
        if (attempt > 100) {
          throw err;
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      } finally {
        await client.end().catch(() => undefined);
      }
    }
  }
}
