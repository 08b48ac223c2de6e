'use strict';
/**
 * The floors of issue 39's figures (bench/hot-paths.js): a bare `node:http` server doing only the work no vault
 * can avoid on three hot paths, each request's database work in ONE statement that also writes its audit rows
 * (bench/floor-statements.js), on the vault's own PostgreSQL database with a `pg` pool of the vault's size, in
 * a child process of its own (so its CPU time is read like the vault's). Routes:
 *   POST /tokens        reads the JSON body of a card token; INSERTs its row and its audit row; answers
 *                       201 { id, type }
 *   GET /tokens/<id>    SELECTs a row of the vault's `tokens` table by key (tenant from the floor-tenant-id
 *                       header) and INSERTs its audit row; answers 200 with the row as JSON
 *   GET /tokens?metadata.<key>=<value>
 *                       the list row's page for the floor-tenant-id header's tenant: the vault's page statement,
 *                       its batched audit record, each row's data opened (bench/list-floor.js)
 *   POST /proxy/<path>  SELECTs the rows named by the floor-token-ids header and INSERTs two audit rows (the
 *                       detokenization and the call), then POSTs the request body over a keep-alive HTTPS
 *                       connection to <path> on the echo server, whose answer it relays
 * Apart from the list's, no authentication, access rules, decryption, templating or rate limits: those are the vault's own
 * per-request work, which the figures measure.
 *
 * `node bench/floor-server.js` is the child process: FLOOR_DATABASE_URL, FLOOR_POOL_SIZE, for the list route
 * FLOOR_MASTER_KEYS (the vault's VAULT_MASTER_KEYS) and, for the proxy
 * route, FLOOR_ECHO_URL (https://127.0.0.1:<port>), FLOOR_ECHO_HOST (the certificate's name) and FLOOR_ECHO_CA
 * (the CA file).
 */
const { randomUUID } = require('node:crypto');
const { URLSearchParams } = require('node:url');
const { startChildProcess } = require('./child-process');
const { echoEnv, echoForwarder, readBody } = require('./floor-echo');
const { openFloorDatabase } = require('./floor-statements');
const { listFloor } = require('./list-floor');

function answer(res, status, payload) {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** The child process: serves until SIGTERM. */
async function serve() {
  const { pool, statements } = await openFloorDatabase();
  const list = process.env.FLOOR_MASTER_KEYS ? listFloor(pool, process.env.FLOOR_MASTER_KEYS) : null;
  /** The tenant of created tokens when a request names none. */
  const defaultTenant = randomUUID();
  const forward = echoForwarder();

  const routes = async (req, res) => {
    const body = await readBody(req);
    const tenantId = req.headers['floor-tenant-id'] ?? defaultTenant;
    const address = req.socket.remoteAddress;
    if (req.method === 'POST' && req.url === '/tokens') {
      const token = JSON.parse(body.toString('utf8'));
      return answer(res, 201, await statements.create(tenantId, token, req.headers, address));
    }
    if (req.method === 'GET' && req.url.startsWith('/tokens?') && list !== null) {
      const metadata = {};
      for (const [name, value] of new URLSearchParams(req.url.slice('/tokens?'.length))) {
        if (name.startsWith('metadata.')) {
          metadata[name.slice('metadata.'.length)] = value.toLowerCase();
        }
      }
      return answer(res, 200, await list(tenantId, metadata, req.headers, address));
    }
    if (req.method === 'GET' && req.url.startsWith('/tokens/')) {
      const id = req.url.slice('/tokens/'.length);
      const row = await statements.reveal(tenantId, id, req.headers, address);
      return row === null ? answer(res, 404, { detail: 'no such token' }) : answer(res, 200, row);
    }
    if (req.method === 'POST' && req.url.startsWith('/proxy/') && forward !== null) {
      const ids = String(req.headers['floor-token-ids'] ?? '').split(',');
      const rows = await statements.proxy(tenantId, ids, req.headers, address);
      if (rows.length !== ids.length) {
        return answer(res, 404, { detail: `${rows.length} of ${ids.length} tokens found` });
      }
      const reply = await forward(req.url.slice('/proxy'.length), req.headers, body);
      res.writeHead(reply.status, {
        'content-type': reply.type ?? 'application/octet-stream',
        'content-length': reply.payload.length,
      });
      return res.end(reply.payload);
    }
    return answer(res, 404, { detail: 'no such route' });
  };

  listenFloor('floor', routes, () => pool.end());
}

/**
 * A floor's node:http server on 127.0.0.1 (port printed as "listening <port>") serving `routes(req, res)`,
 * a failure answered 500; on SIGTERM it closes, awaits `stop()` and exits.
 */
function listenFloor(label, routes, stop) {
  const server = require('node:http').createServer((req, res) => {
    routes(req, res).catch((err) => {
      process.stderr.write(`${label}: ${err instanceof Error ? err.message : String(err)}\n`);
      if (!res.headersSent) {
        answer(res, 500, { detail: `${label} error` });
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
  process.once('SIGTERM', () => {
    server.close(() => void Promise.resolve(stop()).finally(() => process.exit(0)));
    server.closeAllConnections();
  });
}

/**
 * `node <script>` as a floor's child process on `databaseUrl` with a pool of `poolSize` (FLOOR_DATABASE_URL,
 * FLOOR_POOL_SIZE) and `env`; with `cpuProfileDir`, it writes a CPU profile there when it stops. Resolves to
 * { baseUrl, database: 'PostgreSQL', cpuSeconds(), unexpectedExit(), stop(), killNow() }.
 */
async function startFloorProcess(
  script,
  { name, databaseUrl, poolSize, cpuSeconds, cpuProfileDir = null, profileWindows = false },
  env,
) {
  const child = await startChildProcess({
    name,
    script,
    args: cpuProfileDir !== null ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [],
    env: { FLOOR_DATABASE_URL: databaseUrl, FLOOR_POOL_SIZE: String(poolSize), ...env },
    cpuSeconds,
    profileWindows,
  });
  return { ...child, baseUrl: `http://127.0.0.1:${child.port}`, database: 'PostgreSQL' };
}

/**
 * Starts a floor server (startFloorProcess's `options`); with `masterKeys` (the vault's), its list route; with
 * `echo` ({ url, host, caFile } of the echo server), its proxy route too.
 */
function startFloorServer(options) {
  const { masterKeys = null, echo = null } = options;
  return startFloorProcess(__filename, options, {
    ...(masterKeys !== null ? { FLOOR_MASTER_KEYS: masterKeys } : {}),
    ...echoEnv(echo),
  });
}

if (require.main === module) {
  serve().catch((err) => {
    process.stderr.write(`floor server failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { answer, listenFloor, startFloorProcess, startFloorServer };
