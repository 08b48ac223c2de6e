'use strict';
/**
 * The framework's own share (issue 39): a bare NestJS-on-Express app, one controller, doing the create and
 * reveal floors' statements (bench/floor-statements.js) and nothing else: no guard, pipe, interceptor,
 * middleware or filter of the vault's, Nest's default JSON body parser, the same `pg` pool size. Its rows next
 * to bench/floor-server.js's show what Nest and Express cost before any vault feature runs.
 *   POST /tokens        201 { id, type }, the token row and its audit row in one statement
 *   GET /tokens/:id     200 the row, its audit row in the same statement; 404 when there is none
 *
 * `node bench/nest-floor.js` is the child process: FLOOR_DATABASE_URL and FLOOR_POOL_SIZE; it writes
 * "listening <port>" on stdout once it accepts connections. Plain JavaScript like the rest of bench/, so the
 * decorators are applied as functions.
 */
require('reflect-metadata');
const { randomUUID } = require('node:crypto');
const { startChildProcess } = require('./child-process');
const { openFloorDatabase } = require('./floor-statements');

/** The app's module: one controller over `statements`, created tokens in `defaultTenant` unless a header says. */
function floorModule(statements, defaultTenant) {
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
  }
  const route = (name, decorators, params) => {
    const proto = FloorController.prototype;
    for (const decorate of decorators) {
      decorate(proto, name, Object.getOwnPropertyDescriptor(proto, name));
    }
    params.forEach((decorate, index) => decorate(proto, name, index));
  };
  route('create', [Post(), HttpCode(201)], [Body(), Headers(), Ip()]);
  route('reveal', [Get(':id')], [Param('id'), Headers(), Ip()]);
  Controller('tokens')(FloorController);

  class FloorModule {}
  Module({ controllers: [FloorController] })(FloorModule);
  return FloorModule;
}

/** The child process: serves until SIGTERM. */
async function serve() {
  const { NestFactory } = require('@nestjs/core');
  const { pool, statements } = await openFloorDatabase();
  const app = await NestFactory.create(floorModule(statements, randomUUID()), { logger: ['error', 'warn'] });
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
 * Starts the Nest floor on `databaseUrl` with a pool of `poolSize`. Resolves to startChildProcess's handle
 * with baseUrl and database.
 */
async function startNestFloor({ databaseUrl, poolSize, cpuSeconds, cpuProfileDir = null, profileWindows }) {
  const child = await startChildProcess({
    name: 'bare NestJS floor',
    script: __filename,
    args: cpuProfileDir !== null ? ['--cpu-prof', `--cpu-prof-dir=${cpuProfileDir}`] : [],
    env: { FLOOR_DATABASE_URL: databaseUrl, FLOOR_POOL_SIZE: String(poolSize) },
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
