'use strict';
/**
 * The react floor: the work no vault can avoid for one warm reaction of the bench reactor (bench/scenarios.js
 * reactSetup, a formula reactor over one card token), so issue 39's react figures have a measured bound
 * (bench/hot-paths.js). A bare `node:http` server on the vault's PostgreSQL database with a `pg` pool of the
 * vault's size, in a child process of its own, answering POST /reactors/<id>/react for the floor-tenant-id
 * header's tenant:
 *   - the JSON body parsed, its `{{ <token id> }}` expressions collected;
 *   - ONE statement (bench/floor-statements.js, floor_react): the tokens read by key and the two records the
 *     vault writes for a reaction (the tokens used, the invocation), committed before any data leaves;
 *   - each token's data opened by the vault's envelope `open` under the tenant's data key (bench/list-floor.js);
 *   - the expressions replaced by the data, the formula's parameters applied by the vault's prepareArgs;
 *   - the run handed to a sandbox worker process: as many as the vault's pool runs (SANDBOX_WORKERS), started
 *     with the vault's flags (src/sandbox/worker-process.ts), over a pipe in the vault's frames
 *     (src/sandbox/worker-frames.ts), with the vault's deadline kept in this process; each worker holds a
 *     warm isolate and a spare context (bench/react-floor-worker.js);
 *   - the answer the vault gives, { tokens, raw }.
 * No authentication, access rules, rate limits, reactor lookup (its code and parameters are the bench
 * reactor's, bench/sandbox-code.js), tracing or metrics: the vault's own per-request work.
 *
 * `node bench/react-floor.js` is the child process: FLOOR_DATABASE_URL, FLOOR_POOL_SIZE, FLOOR_MASTER_KEYS,
 * FLOOR_SANDBOX_WORKERS, FLOOR_SANDBOX_TIMEOUT_MS, FLOOR_SANDBOX_MEMORY_MB.
 */
const { spawn } = require('node:child_process');
const { dirname, join } = require('node:path');
const { readBody } = require('./floor-echo');
const { answer, listenFloor, startFloorProcess } = require('./floor-server');
const { childrenCpuSeconds } = require('./server');

const DIST = join(__dirname, '..', 'dist', 'src');
const WORKER_SCRIPT = join(__dirname, 'react-floor-worker.js');
const REFERENCE = /^\{\{\s*([0-9a-f-]{36})\s*\}\}$/i;

/** The flags src/sandbox/worker-process.ts starts the vault's workers with, reading only what they load. */
function workerArgs(ivmPath) {
  const gypBuildPath = dirname(require.resolve('node-gyp-build/package.json', { paths: [ivmPath] }));
  const readable = [__dirname, join(DIST, 'sandbox', 'worker'), ivmPath, gypBuildPath, '/etc/alpine-release'];
  return [
    '--no-node-snapshot',
    '--jitless',
    '--no-warnings',
    '--permission',
    '--allow-addons',
    ...readable.map((path) => `--allow-fs-read=${path}`),
    WORKER_SCRIPT,
  ];
}

/** `count` worker processes fed first come first served: run(input) resolves to the result's JSON text. */
function sandboxWorkers({ count, timeoutMs, memoryMb }) {
  const { encodeFrame, FrameReader } = require(join(DIST, 'sandbox', 'worker-frames'));
  const { ivmLocation, MAX_RESULT_BYTES } = require(join(DIST, 'sandbox', 'worker-process'));
  const { PRELUDE } = require(join(DIST, 'sandbox', 'prelude'));
  const { MODULE_SOURCES } = require(join(DIST, 'sandbox', 'modules'));
  const { REACT_CODE } = require('./sandbox-code');
  const ivmPath = ivmLocation();
  const workers = [];
  const queue = [];
  let nextId = 1;
  let closed = false;

  const finish = (worker, failure, result) => {
    const job = worker.job;
    clearTimeout(worker.timer);
    worker.job = null;
    if (job !== null) {
      if (failure === null) {
        job.resolve(result);
      } else {
        job.reject(new Error(failure));
      }
    }
  };
  const dispatch = () => {
    for (const worker of workers) {
      if (queue.length > 0 && worker.ready && worker.job === null) {
        const job = queue.shift();
        worker.job = job;
        worker.timer = setTimeout(() => worker.child.kill('SIGKILL'), timeoutMs);
        worker.pipe.write(encodeFrame({ type: 'run', id: job.id }, job.input));
      }
    }
  };
  const spawnWorker = (index) => {
    const child = spawn(process.execPath, workerArgs(ivmPath), {
      env: {},
      stdio: ['ignore', 'ignore', 'inherit', 'pipe'],
    });
    const worker = { child, pipe: child.stdio[3], ready: false, job: null, timer: null };
    const reader = new FrameReader(
      { headerBytes: 64 * 1024, bodyBytes: MAX_RESULT_BYTES },
      (message, body) => {
        if (message.type === 'ready') {
          worker.ready = true;
        } else if (message.type === 'done' && worker.job?.id === message.id) {
          finish(worker, message.ok ? null : JSON.stringify(message.error), body.toString('utf8'));
        }
        dispatch();
      },
      () => child.kill('SIGKILL'),
    );
    worker.pipe.on('data', (chunk) => reader.push(chunk));
    worker.pipe.on('error', () => undefined);
    child.on('exit', () => {
      finish(worker, 'the sandbox worker exited', null);
      if (!closed) {
        workers[index] = spawnWorker(index);
      }
    });
    const init = { memoryMb, prelude: PRELUDE, modules: MODULE_SOURCES, code: REACT_CODE };
    worker.pipe.write(encodeFrame({ type: 'init', ivmPath, ...init }));
    return worker;
  };
  for (let i = 0; i < count; i++) {
    workers.push(spawnWorker(i));
  }
  return {
    run: (input) =>
      new Promise((resolve, reject) => {
        queue.push({ id: nextId++, input, resolve, reject });
        dispatch();
      }),
    close() {
      closed = true;
      for (const worker of workers) {
        worker.child.kill('SIGKILL');
      }
    },
  };
}

/** The token ids of `value`'s `{{ <id> }}` strings, at any depth, added to `ids`. */
function collectReferences(value, ids) {
  if (typeof value === 'string') {
    const match = REFERENCE.exec(value);
    if (match !== null) {
      ids.add(match[1].toLowerCase());
    }
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) {
      collectReferences(item, ids);
    }
  }
  return ids;
}

/** `value` with each `{{ <id> }}` string replaced by the token's data (`data`: id -> data). */
function substitute(value, data) {
  if (typeof value === 'string') {
    const match = REFERENCE.exec(value);
    return match === null ? value : data.get(match[1].toLowerCase());
  }
  if (Array.isArray(value)) {
    return value.map((item) => substitute(item, data));
  }
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, substitute(item, data)]));
  }
  return value;
}

/** The child process: serves until SIGTERM. */
async function serve() {
  const { openFloorDatabase } = require('./floor-statements');
  const { openRows, tenantDataKeys } = require('./list-floor');
  const { prepareArgs } = require(join(DIST, 'reactors', 'react-args'));
  const { REACT_PARAMETERS } = require('./sandbox-code');
  const { pool, statements } = await openFloorDatabase();
  const dataKey = tenantDataKeys(pool, process.env.FLOOR_MASTER_KEYS);
  const sandbox = sandboxWorkers({
    count: Number(process.env.FLOOR_SANDBOX_WORKERS),
    timeoutMs: Number(process.env.FLOOR_SANDBOX_TIMEOUT_MS),
    memoryMb: Number(process.env.FLOOR_SANDBOX_MEMORY_MB),
  });

  const react = async (req, res) => {
    const match = /^\/reactors\/([0-9a-f-]{36})\/react$/.exec(req.url);
    if (req.method !== 'POST' || match === null) {
      return answer(res, 404, { detail: 'no such route' });
    }
    const tenantId = String(req.headers['floor-tenant-id']);
    const args = JSON.parse((await readBody(req)).toString('utf8')).args ?? {};
    const ids = [...collectReferences(args, new Set())];
    const rows = await statements.react(tenantId, match[1], ids, req.headers, req.socket.remoteAddress);
    if (rows.length !== ids.length) {
      return answer(res, 404, { detail: `${rows.length} of ${ids.length} tokens found` });
    }
    const opened = await openRows(dataKey, tenantId, rows);
    const data = new Map(rows.map((row, i) => [row.id, opened[i]]));
    const prepared = prepareArgs(REACT_PARAMETERS, substitute(args, data));
    const input = JSON.stringify({ req: { args: prepared, configuration: {} }, bt: false, fetch: true });
    const outcome = JSON.parse(await sandbox.run(input));
    if (!outcome.ok) {
      return answer(res, 500, { detail: 'the bench reactor failed' });
    }
    return answer(res, 200, { tokens: null, raw: outcome.value?.raw ?? null });
  };

  listenFloor('react floor', react, () => {
    sandbox.close();
    return pool.end();
  });
}

/**
 * Starts the react floor (bench/floor-server.js startFloorProcess's `options`) with `masterKeys` (the vault's)
 * and the vault's `sandbox` settings ({ workers, timeoutMs, memoryMb }). Its handle also has
 * childrenCpuSeconds(), its sandbox workers' CPU time.
 */
async function startReactFloor(options) {
  const { masterKeys, sandbox } = options;
  const floor = await startFloorProcess(__filename, options, {
    FLOOR_MASTER_KEYS: masterKeys,
    FLOOR_SANDBOX_WORKERS: String(sandbox.workers),
    FLOOR_SANDBOX_TIMEOUT_MS: String(sandbox.timeoutMs),
    FLOOR_SANDBOX_MEMORY_MB: String(sandbox.memoryMb),
  });
  return { ...floor, childrenCpuSeconds: () => childrenCpuSeconds(floor.pid) };
}

if (require.main === module) {
  serve().catch((err) => {
    process.stderr.write(`react floor failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { startReactFloor };
