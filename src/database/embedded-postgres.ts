import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

export interface EmbeddedPostgres {
  /** Connection options for `pg`: a Unix socket inside the data folder, so no TCP port is opened. */
  connection: { host: string; port: number; user: string; database: string };
  /** The whole cluster as a PGlite data-dir image, which `startEmbeddedPostgres` can start from. */
  dump(): Promise<Blob>;
  close(): Promise<void>;
}

const SOCKET_PORT = 5432;
const SOCKET_NAME = `.s.PGSQL.${SOCKET_PORT}`;
/** Unix socket paths are limited to ~107 bytes. */
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
 * An in-memory database starts from `image` (a `dump()`) when given, instead of a new cluster: loading one
 * takes a fraction of creating one.
 */
export async function startEmbeddedPostgres(dataDir: string | null, image?: Blob): Promise<EmbeddedPostgres> {
  if (dataDir !== null) {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  }
  const unlock = dataDir === null ? () => undefined : lockDataDir(dataDir);
  let db: PGlite;
  try {
    db = await (dataDir === null
      ? PGlite.create(image === undefined ? undefined : { loadDataDir: image })
      : PGlite.create(join(dataDir, 'pgdata')));
  } catch (err) {
    unlock();
    throw err;
  }
  // The socket lives in the data folder; when that path is too long for a Unix socket (or there is no data
  // folder), in a private temporary folder (mode 0700). Never a TCP port: it would have no authentication.
  let socketDir = dataDir ?? '';
  let ownedSocketDir: string | null = null;
  if (dataDir === null || join(dataDir, SOCKET_NAME).length > MAX_SOCKET_PATH) {
    ownedSocketDir = mkdtempSync(join(tmpdir(), 'tv-pg-'));
    socketDir = ownedSocketDir;
  }
  const socketPath = join(socketDir, SOCKET_NAME);
  rmSync(socketPath, { force: true });
  const server = new PGLiteSocketServer({ db, path: socketPath });
  await server.start();
  return {
    connection: { host: socketDir, port: SOCKET_PORT, user: 'postgres', database: 'postgres' },
    dump: () => db.dumpDataDir('none'),
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
