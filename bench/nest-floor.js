'use strict';
/**
 * The framework's own share (issue 39): a bare NestJS-on-Express app, one controller, doing the floors'
 * statements (bench/floor-statements.js) and nothing else: no guard, pipe, interceptor, middleware or filter
 * of the vault's, Express's JSON body parser as the vault sets it (not on /proxy, whose body the vault reads
 * raw), the same `pg` pool size. Its rows next to bench/floor-server.js's show what Nest and Express cost
 * before any vault feature runs.
 *   POST /tokens        201 { id, type }, the token row and its audit row in one statement
 *   GET /tokens/:id     200 the row, its audit row in the same statement; 404 when there is none
 *   POST /proxy/*path   the proxy floor's statement (rows named by floor-token-ids, two audit rows), then the
 *                       raw body POSTed to the echo server (bench/floor-echo.js), its answer relayed
 *
 * `node bench/nest-floor.js` is the child process: FLOOR_DATABASE_URL, FLOOR_POOL_SIZE and, for the proxy
 * route, bench/floor-echo.js's FLOOR_ECHO_*; it writes "listening <port>" on stdout once it accepts
 * connections. Plain JavaScript like the rest of bench/, so the decorators are applied as functions.
 */
require('reflect-metadata');
const { randomUUID } = require('node:crypto');
const { startChildProcess } = require('./child-process');
const { echoEnv, echoForwarder, readBody } = require('./floor-echo');
const { openFloorDatabase } = require('./floor-statements');

/**
 * The app's module: one controller over `statements` and `forward` (null: no proxy route), created tokens in
 * `defaultTenant` unless a header says.
 */
function floorModule(statements, forward, defaultTenant) {
  const {
    Body,
    Controller,
    Get,
    Headers,
    HttpCode,
    Ip,
    Module,
    NotFoundException,
    Param,
    Post,
    Req,
    Res,
  } = require('@nestjs/common');

  class FloorController {
    create(body, headers, ip) {
      return statements.create(headers['floor-tenant-id'] ?? defaultTenant, body, headers, ip);
    }

    async reveal(id, headers, ip) {
      const row = await statements.reveal(headers['floor-tenant-id'] ?? defaultTenant, id, headers, ip);
      if (row === null) {
        throw new NotFoundException('no such token');
      }
      return row;
    }

    async proxy(req, res) {
      const body = await readBody(req);
      const ids = String(req.headers['floor-token-ids'] ?? '').split(',');
      const tenantId = req.headers['floor-tenant-id'] ?? defaultTenant;
      const rows = await statements.proxy(tenantId, ids, req.headers, req.ip);
      if (rows.length !== ids.length) {
        throw new NotFoundException(`${rows.length} of ${ids.length} tokens found`);
      }
      const reply = await forward(req.url.slice('/proxy'.length), req.headers, body);
      res.writeHead(reply.status, {
        'content-type': reply.type ?? 'application/octet-stream',
        'content-length': reply.payload.length,
      });
      res.end(reply.payload);
    }
  }
  const route = (name, decorators, params) => {
    const proto = FloorController.prototype;
    for (const decorate of decorators) {
      decorate(proto, name, Object.getOwnPropertyDescriptor(proto, name));
    }
    params.forEach((decorate, index) => decorate(proto, name, index));
  };
  route('create', [Post('tokens'), HttpCode(201)], [Body(), Headers(), Ip()]);
  route('reveal', [Get('tokens/:id')], [Param('id'), Headers(), Ip()]);
  if (forward !== null) {
    route('proxy', [Post('proxy/*path')], [Req(), Res()]);
  }
  Controller()(FloorController);

  class FloorModule {}
  Module({ controllers: [FloorController] })(FloorModule);
  return FloorModule;
}

/** The child process: serves until SIGTERM. */
async function serve() {
  const { NestFactory } = require('@nestjs/core');
  const { json } = require('express');
  const { pool, statements } = await openFloorDatabase();
  const app = await NestFactory.create(floorModule(statements, echoForwarder(), randomUUID()), {
    logger: ['error', 'warn'],
    bodyParser: false,
  });
  // The vault's JSON parser (src/app.ts), skipped on /proxy as the vault's is.
  const parse = json({ limit: '1mb', strict: false, type: ['application/json', 'application/*+json'] });
  app.use((req, res, next) => (req.path.startsWith('/proxy/') ? next() : parse(req, res, next)));
  const server = app.getHttpServer();
  server.keepAliveTimeout = 60_000;
  await app.listen(0, '127.0.0.1');
  process.stdout.write(`listening ${server.address().port}\n`);
  process.once('SIGTERM', () => {
    server.closeAllConnections();
    void app
      .close()
      .then(() => pool.end())
      .finally(() => process.exit(0));
  });
}

/**
 * Starts the Nest floor on `databaseUrl` with a pool of `poolSize`; with `echo` ({ url, host, caFile } of the
 * echo server), its proxy route too. Resolves to startChildProcess's handle with baseUrl and database.
 */
async function startNestFloor({
  name = 'bare NestJS floor',
  databaseUrl,
  poolSize,
  echo = null,
  cpuSeconds,
  cpuProfileDir = null,
  profileWindows,
}) {
  const child = await startChildProcess({
    name,
    script: __filename,
    args: cpuProfileDir !== null ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [],
    env: { FLOOR_DATABASE_URL: databaseUrl, FLOOR_POOL_SIZE: String(poolSize), ...echoEnv(echo) },
    cpuSeconds,
    profileWindows,
  });
  return { ...child, baseUrl: `http://127.0.0.1:${child.port}`, database: 'PostgreSQL' };
}

if (require.main === module) {
  serve().catch((err) => {
    process.stderr.write(
      `bare NestJS floor failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
    );
    process.exit(1);
  });
}

module.exports = { startNestFloor };
