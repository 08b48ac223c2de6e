/**
 * The CPU time of the PostgreSQL server per request, next to the server process's own: on a machine the
 * database shares, a route that asks more of PostgreSQL than its floor does is slower for that alone, and
 * this column shows how much. Linux only, and only for a database on this machine (the processes named
 * `postgres`: backends, WAL writer, checkpointer, autovacuum; every database of that server counts).
 */
const { readdirSync, readFileSync } = require('node:fs');
const { processCpuSeconds } = require('./server');

const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** CPU seconds by pid of every `postgres` process, or null when they cannot be read here. */
function postgresCpuByPid() {
  let entries;
  try {
    entries = readdirSync('/proc');
  } catch {
    return null;
  }
  const byPid = new Map();
  for (const pid of entries) {
    if (!/^\d+$/.test(pid)) {
      continue;
    }
    let name;
    try {
      name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      continue; // exited meanwhile
    }
    const seconds = name === 'postgres' ? processCpuSeconds(pid) : null;
    if (seconds !== null) {
      byPid.set(pid, seconds);
    }
  }
  return byPid;
}

/**
 * A meter of the database's CPU for `postgresUrl`: `start()` returns a function that gives the seconds spent
 * since, or null (no PostgreSQL URL, a remote one, or no /proc). A process that exits meanwhile loses what it
 * spent after start; one that starts meanwhile counts whole.
 */
function databaseCpuMeter(postgresUrl) {
  const local = postgresUrl !== null && LOCAL_HOSTS.has(new URL(postgresUrl).hostname);
  return {
    start() {
      const before = local ? postgresCpuByPid() : null;
      return () => {
        const after = before === null ? null : postgresCpuByPid();
        if (after === null || after.size === 0) {
          return null;
        }
        let seconds = 0;
        for (const [pid, spent] of after) {
          seconds += spent - (before.get(pid) ?? 0);
        }
        return seconds;
      };
    },
  };
}

module.exports = { databaseCpuMeter };
