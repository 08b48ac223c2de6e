'use strict';
/** Starts the built service as a child process on loopback, on a throw-away database, and stops it. */
const { execFile, spawn } = require('node:child_process');
const { randomBytes, randomInt } = require('node:crypto');
const { mkdtempSync, readFileSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');
const { profileWindow, profileWindowArgs, profileWindowStdio } = require('./profile-window');
// The service's own configuration, from the build `npm run bench` makes first.
const { loadConfig } = require('../dist/src/config/app-config');

const ROOT = join(__dirname, '..');
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 10_000;

/** An API key in the service's format: key_ + 44 base58 characters (about 256 bits). */
function generateApiKey() {
  let key = 'key_';
  for (let i = 0; i < 44; i += 1) {
    key += BASE58[randomInt(BASE58.length)];
  }
  return key;
}

function freeLoopbackPort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** A fresh database on the PostgreSQL server of `url`, dropped by the returned cleanup. */
async function createPostgresDatabase(url) {
  const name = `tv_bench_${process.pid}_${randomBytes(4).toString('hex')}`;
  const admin = async (sql) => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      await client.query(sql);
    } finally {
      await client.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const target = new URL(url);
  target.pathname = `/${name}`;
  return { url: target.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
}

/**
 * Starts `node dist/src/main.js` (or the `entry` script, a path from the project root) with a generated
 * bootstrap key, on a temporary embedded database or, when `postgresUrl` is given, on a new database of that
 * server. Resolves once /health/ready answers 200. `env` adds or replaces environment variables (NODE_ENV is
 * production unless it says otherwise). With `cpuProfileDir`, the server writes a V8 CPU profile there when it
 * stops. With `profileWindows`, its `profile` is { start(), stop(file) } (bench/profile-window.js), else null.
 */
async function startServer({
  postgresUrl,
  cpuProfileDir = null,
  profileWindows = false,
  entry = join('dist', 'src', 'main.js'),
  env: extraEnv = {},
}) {
  const port = await freeLoopbackPort();
  const key = generateApiKey();
  const dataDir = mkdtempSync(join(tmpdir(), 'tv-bench-'));
  const postgres = postgresUrl ? await createPostgresDatabase(postgresUrl) : null;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
    VAULT_BOOTSTRAP_API_KEY: key,
    VAULT_MASTER_KEYS: `bench-1:${randomBytes(32).toString('base64')}`,
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
    // The rate limits stay on (their cost is part of every figure) but far above what the bench sends.
    RATE_LIMIT_APPLICATION: '999999999/1',
    RATE_LIMIT_TENANT: '999999999/1',
    RATE_LIMIT_UNAUTHENTICATED: '999999999/1',
    RATE_LIMIT_PROXY_ADDRESS: '999999999/1',
    RATE_LIMIT_HEALTH: '999999999/1',
    ...extraEnv,
  };
  const { databasePoolSize, sandboxWorkers, sandboxTimeoutMs, sandboxMemoryMb } = loadConfig(env);
  // --cpu-prof writes its .cpuprofile when the process exits, i.e. after stop()'s SIGTERM.
  const profiling = cpuProfileDir !== null ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [];
  const windows = profileWindows ? profileWindowArgs() : [];
  const child = spawn(process.execPath, [...windows, ...profiling, join(ROOT, entry)], {
    cwd: ROOT,
    env,
    stdio: profileWindows ? profileWindowStdio : ['ignore', 'pipe', 'pipe'],
  });
  const output = [];
  const keep = (chunk) => {
    output.push(
      ...chunk
        .toString()
        .split('\n')
        .filter((line) => line.trim() !== ''),
    );
    output.splice(0, Math.max(0, output.length - 40));
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));

  let stopping = false;
  const server = {
    baseUrl: `http://127.0.0.1:${port}`,
    key,
    database: postgres ? 'PostgreSQL' : 'embedded',
    /** The PostgreSQL database it runs on (null on the embedded one) and its pool size, for the floor servers. */
    databaseUrl: postgres ? postgres.url : null,
    databasePoolSize,
    /** Its VAULT_MASTER_KEYS: the list floor opens the same tokens' data (bench/list-floor.js). */
    masterKeys: env.VAULT_MASTER_KEYS,
    /** Its sandbox pool's settings: the react floor runs as many workers (bench/react-floor.js). */
    sandbox: { workers: sandboxWorkers, timeoutMs: sandboxTimeoutMs, memoryMb: sandboxMemoryMb },
    output,
    profile: profileWindows ? profileWindow(child) : null,
    /** Stops the process (SIGTERM, then SIGKILL), then removes its data. Safe to call more than once. */
    async stop() {
      stopping = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
      if (postgres) {
        await postgres.drop();
      }
    },
    /** Why the server stopped on its own (crash, killed), with its last output lines; null while it runs. */
    unexpectedExit() {
      if (stopping || (child.exitCode === null && child.signalCode === null)) {
        return null;
      }
      return `the server exited (${child.signalCode ?? `code ${child.exitCode}`}):\n${output.join('\n')}`;
    },
    /**
     * Runs an operator command (`node dist/src/cli.js <args>`, src/cli/) on this server's database and resolves
     * its standard output. PostgreSQL only: the embedded database admits one process, the server.
     */
    cli(args) {
      if (!postgres) {
        return Promise.reject(
          new Error('operator commands need the PostgreSQL database (BENCH_DATABASE_URL)'),
        );
      }
      return new Promise((resolve, reject) => {
        execFile(
          process.execPath,
          [join(ROOT, 'dist', 'src', 'cli.js'), ...args],
          { cwd: ROOT, env, timeout: READY_TIMEOUT_MS },
          (err, stdout, stderr) => {
            if (err) {
              reject(new Error(`cli ${args[0]} failed: ${err.message}\n${String(stderr).slice(-2000)}`));
            } else {
              resolve(String(stdout));
            }
          },
        );
      });
    },
    /** CPU seconds the server process has used so far (Linux /proc), or null where that cannot be read. */
    /** The CPU time of the vault's child processes now alive: its sandbox workers. */
    childrenCpuSeconds() {
      return childrenCpuSeconds(child.pid);
    },
    cpuSeconds() {
      return processCpuSeconds(child.pid);
    },
    /** For process 'exit' handlers, which cannot wait. */
    killNow() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
      }
    },
  };

  try {
    await waitUntilReady(server.baseUrl, exited, output, key);
  } catch (err) {
    await server.stop();
    throw err;
  }
  return server;
}

/** Linux clock ticks per second (USER_HZ), which /proc/<pid>/stat counts CPU time in. */
const CLOCK_TICKS = 100;

function processCpuSeconds(pid) {
  try {
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}

/** The summed CPU time of a process's live children (Linux: /proc/<pid>/task/<pid>/children); null elsewhere. */
function childrenCpuSeconds(pid) {
  let children;
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return null;
  }
  let total = 0;
  for (const child of children) {
    total += processCpuSeconds(Number(child)) ?? 0;
  }
  return total;
}

/**
 * Ready, and its management key accepted. Readiness already waits for the default tenant (main.ts and
 * bench/proxy-vault.js hold it with firstRunSetup until VAULT_BOOTSTRAP_API_KEY's tenant exists; the proxy
 * vault once did not, and its first setup call got 401); the key check makes a regression fail here, loudly.
 */
async function waitUntilReady(baseUrl, exited, output, key) {
  let exit = null;
  void exited.then((value) => {
    exit = value;
  });
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (exit !== null) {
      throw new Error(
        `the server exited (${exit.signal ?? `code ${exit.code}`}) before it was ready:\n${output.join('\n')}`,
      );
    }
    try {
      const response = await fetch(`${baseUrl}/health/ready`, { signal: AbortSignal.timeout(2000) });
      const known =
        response.ok &&
        (
          await fetch(`${baseUrl}/applications/key`, {
            headers: { 'bt-api-key': key },
            signal: AbortSignal.timeout(2000),
          })
        ).ok;
      if (known) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the server was not ready after ${READY_TIMEOUT_MS / 1000} s:\n${output.join('\n')}`);
}

module.exports = { startServer, generateApiKey, childrenCpuSeconds, processCpuSeconds };
