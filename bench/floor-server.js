'use strict';
/**
 * The floors of issue 22's ratios: a bare `node:http` server doing only the work no vault can avoid on three
 * hot paths, on the vault's own PostgreSQL database with a `pg` pool of the vault's size, in a child process of
 * its own (so its CPU time is read like the vault's). Routes:
 *   POST /tokens        reads the JSON body of a card token, INSERTs one row into its own table
 *                       (bench_floor_tokens, created at start), answers 201 { id, type }
 *   GET /tokens/<id>    one primary-key SELECT of a row of the vault's `tokens` table (tenant from the
 *                       floor-tenant-id header), answers 200 with the row as JSON
 *   POST /proxy/<path>  one SELECT of the rows named by the floor-token-ids header (WHERE id = ANY($2)), then the
 *                       request body POSTed over a keep-alive HTTPS connection to <path> on the echo server, whose
 *                       answer it relays
 * No authentication, access rules, decryption, templating or audit: those are the vault's own per-request work,
 * which the ratios measure. Statements are prepared, as the vault's are (DATABASE_PREPARED_STATEMENTS).
 *
 * `node bench/floor-server.js` is the child process: FLOOR_DATABASE_URL, FLOOR_POOL_SIZE and, for the proxy
 * route, FLOOR_ECHO_URL (https://127.0.0.1:<port>), FLOOR_ECHO_HOST (the certificate's name) and FLOOR_ECHO_CA
 * (the CA file).
 */
const { randomUUID } = require('node:crypto');
const { readFileSync } = require('node:fs');
const { startChildProcess } = require('./child-process');

const CREATE_TABLE = `CREATE TABLE IF NOT EXISTS bench_floor_tokens (
  id uuid PRIMARY KEY, type text NOT NULL, data jsonb NOT NULL, metadata jsonb,
  created_at timestamptz NOT NULL DEFAULT now())`;
const INSERT = {
  name: 'floor_insert',
  text: 'INSERT INTO bench_floor_tokens (id, type, data, metadata) VALUES ($1, $2, $3, $4)',
};
const SELECT_ONE = {
  name: 'floor_select_one',
  text: 'SELECT * FROM tokens WHERE tenant_id = $1 AND id = $2',
};
const SELECT_MANY = {
  name: 'floor_select_many',
  text: 'SELECT id, data FROM tokens WHERE tenant_id = $1 AND id = ANY($2)',
};

function answer(res, status, payload) {
  const text = JSON.stringify(payload);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The child process: serves until SIGTERM. */
async function serve() {
  const http = require('node:http');
  const https = require('node:https');
  const { Pool } = require('pg');
  const pool = new Pool({
    connectionString: process.env.FLOOR_DATABASE_URL,
    max: Number(process.env.FLOOR_POOL_SIZE),
  });
  await pool.query(CREATE_TABLE);
  const echo = process.env.FLOOR_ECHO_URL
    ? {
        url: new URL(process.env.FLOOR_ECHO_URL),
        servername: process.env.FLOOR_ECHO_HOST,
        agent: new https.Agent({ keepAlive: true, ca: readFileSync(process.env.FLOOR_ECHO_CA) }),
      }
    : null;

  const forward = (path, headers, body) =>
    new Promise((resolve, reject) => {
      const outbound = https.request(
        {
          host: echo.url.hostname,
          port: echo.url.port,
          servername: echo.servername,
          path,
          method: 'POST',
          agent: echo.agent,
          headers: {
            host: `${echo.servername}:${echo.url.port}`,
            'content-type': headers['content-type'] ?? 'application/octet-stream',
            'content-length': body.length,
          },
        },
        (res) => {
          readBody(res).then(
            (payload) => resolve({ status: res.statusCode, type: res.headers['content-type'], payload }),
            reject,
          );
        },
      );
      outbound.on('error', reject);
      outbound.end(body);
    });

  const routes = async (req, res) => {
    const body = await readBody(req);
    if (req.method === 'POST' && req.url === '/tokens') {
      const token = JSON.parse(body.toString('utf8'));
      const id = randomUUID();
      await pool.query({
        ...INSERT,
        values: [id, token.type, JSON.stringify(token.data), JSON.stringify(token.metadata ?? null)],
      });
      return answer(res, 201, { id, type: token.type });
    }
    if (req.method === 'GET' && req.url.startsWith('/tokens/')) {
      const { rows } = await pool.query({
        ...SELECT_ONE,
        values: [req.headers['floor-tenant-id'], req.url.slice('/tokens/'.length)],
      });
      if (rows.length === 0) {
        return answer(res, 404, { detail: 'no such token' });
      }
      const row = rows[0];
      return answer(res, 200, { ...row, data: row.data === null ? null : row.data.toString('base64') });
    }
    if (req.method === 'POST' && req.url.startsWith('/proxy/') && echo !== null) {
      const ids = String(req.headers['floor-token-ids'] ?? '').split(',');
      const { rows } = await pool.query({ ...SELECT_MANY, values: [req.headers['floor-tenant-id'], ids] });
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

  const server = http.createServer((req, res) => {
    routes(req, res).catch((err) => {
      process.stderr.write(`floor: ${err instanceof Error ? err.message : String(err)}\n`);
      if (!res.headersSent) {
        answer(res, 500, { detail: 'floor server error' });
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`listening ${server.address().port}\n`);
  });
  process.once('SIGTERM', () => {
    server.close(() => void pool.end().finally(() => process.exit(0)));
    server.closeAllConnections();
  });
}

/**
 * Starts a floor server on `databaseUrl` with a pool of `poolSize`; with `echo` ({ url, host, caFile } of the
 * echo server), its proxy route too. With `cpuProfileDir`, it writes a CPU profile there when it stops.
 * Resolves to { baseUrl, database: 'PostgreSQL', cpuSeconds(), unexpectedExit(), stop(), killNow() }.
 */
async function startFloorServer({
  name,
  databaseUrl,
  poolSize,
  echo = null,
  cpuSeconds,
  cpuProfileDir = null,
}) {
  const child = await startChildProcess({
    name,
    script: __filename,
    args: cpuProfileDir !== null ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [],
    env: {
      FLOOR_DATABASE_URL: databaseUrl,
      FLOOR_POOL_SIZE: String(poolSize),
      ...(echo !== null
        ? { FLOOR_ECHO_URL: echo.url, FLOOR_ECHO_HOST: echo.host, FLOOR_ECHO_CA: echo.caFile }
        : {}),
    },
    cpuSeconds,
  });
  return { ...child, baseUrl: `http://127.0.0.1:${child.port}`, database: 'PostgreSQL' };
}

if (require.main === module) {
  serve().catch((err) => {
    process.stderr.write(`floor server failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

module.exports = { startFloorServer };
