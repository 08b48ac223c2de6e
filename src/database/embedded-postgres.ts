import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** Connection options for `pg`: a Unix socket inside the data folder, so no TCP port is opened. */
  connection: { host: string; port: number; user: string; database: string };
  close(): Promise<void>;
}

const SOCKET_PORT = 5432;
/** Unix socket paths are limited to ~107 bytes; past that fall back to a loopback port. */
const MAX_SOCKET_PATH = 100;

/** Another live process holds the embedded database folder. */
export class DatabaseInUseError extends Error {}

/**
 * PGlite takes no lock of its own, and two processes on one folder corrupt it: take a pid lock file first.
 * A lock left by a process that no longer runs is taken over.
 */
function lockDataDir(dataDir: string): () => void {
  const lockPath = join(dataDir, 'vault.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err;
      }
      const pid = Number(readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new DatabaseInUseError(
          `The embedded database in ${dataDir} is in use by process ${pid}. Stop it first (one process at a time).`,
        );
      }
      rmSync(lockPath, { force: true });
    }
  }
  throw new DatabaseInUseError(`Could not lock the embedded database in ${dataDir}.`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts PGlite (persisted under `dataDir`, or in memory when `dataDir` is null) behind pglite-socket so the
 * service reaches it through `pg` like any PostgreSQL. PGlite is one session: callers must use a pool of 1.
 */
export async function startEmbeddedPostgres(dataDir: string | null): Promise<EmbeddedPostgres> {
  let socketDir: string;
  let ownedSocketDir: string | null = null;
  if (dataDir === null) {
    ownedSocketDir = mkdtempSync(join(tmpdir(), 'tv-pg-'));
    socketDir = ownedSocketDir;
  } else {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    socketDir = dataDir;
  }
  const unlock = dataDir === null ? () => undefined : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir === null ? undefined : join(dataDir, 'pgdata'));
  } catch (err) {
    unlock();
    throw err;
  }
  const socketPath = join(socketDir, `.s.PGSQL.${SOCKET_PORT}`);
  const useSocket = socketPath.length <= MAX_SOCKET_PATH;
  if (useSocket) {
    rmSync(socketPath, { force: true });
  }
  const server = useSocket
    ? new PGLiteSocketServer({ db, path: socketPath })
    : new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0 });
  await server.start();
  const port = useSocket ? SOCKET_PORT : Number(/:(\d+)$/.exec(server.getServerConn())?.[1]);
  return {
    connection: { host: useSocket ? socketDir : '127.0.0.1', port, user: 'postgres', database: 'postgres' },
    async close() {
      await server.stop();
      await db.close();
      unlock();
      if (ownedSocketDir !== null) {
        rmSync(ownedSocketDir, { recursive: true, force: true });
      }
    },
  };
}
