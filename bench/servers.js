'use strict';
/**
 * The servers a bench run sends requests to, by a scenario's `server`: the vault (none given), the proxy vault
 * ('proxy') and the HTTPS echo server it proxies to ('echo'), and the floor servers (bench/floor-server.js) on
 * the vault's database ('floor') or on the proxy vault's, with the echo server as destination ('proxy-floor'),
 * the bare NestJS app doing the floors' statements ('nest-floor', bench/nest-floor.js; 'nest-proxy-floor' on the
 * proxy vault's database with the echo server as destination), the react floor ('react-floor',
 * bench/react-floor.js, with its sandbox worker processes), a vault whose master
 * key is in a SoftHSM2 token ('pkcs11', bench/pkcs11-vault.js) and one with AUDIT_ENABLED=false ('no-audit',
 * the reference of auditing's cost). With BENCH_PROFILE set, each can be profiled over a scenario's window.
 * Each helper server is started the first time a scenario needs it.
 */
const { join } = require('node:path');
const { startEchoServer } = require('./echo-server');
const { startFloorServer } = require('./floor-server');
const { startNestFloor } = require('./nest-floor');
const { startPkcs11Vault } = require('./pkcs11-vault');
const { startReactFloor } = require('./react-floor');
const { processCpuSeconds, startServer } = require('./server');

/** What scenarios get to prepare data: the management key, a small JSON client for the API and a shared cache. */
function scenarioContext(server) {
  const auth = { 'bt-api-key': server.key };
  const api = async (method, path, body, key = server.key) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { 'bt-api-key': key, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
    });
    const text = await response.text();
    if (!response.ok) {
      throw new Error(`${method} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    }
    return text === '' ? null : JSON.parse(text);
  };
  return {
    baseUrl: server.baseUrl,
    key: server.key,
    auth,
    api,
    database: server.database,
    /** The PostgreSQL database the server runs on (null on the embedded one), for a scenario's bulk load. */
    databaseUrl: server.databaseUrl,
    cli: (args) => server.cli(args),
    cache: new Map(),
    async createApplication({ name = 'bench', type, permissions = [], rules = [] }) {
      const created = await api('POST', '/applications', { name, type, permissions, rules });
      return { id: created.id, key: created.key };
    },
  };
}

/**
 * The proxy scenarios' servers: the echo server (whose CA the vault trusts) and a vault that resolves the echo
 * server's host name to 127.0.0.1 and may proxy to loopback, in development mode since production refuses
 * both settings.
 */
async function startProxyServers(config) {
  const echo = await startEchoServer({ cpuSeconds: processCpuSeconds });
  try {
    const vault = await startServer({
      postgresUrl: config.postgresUrl,
      cpuProfileDir: config.cpuProfileDir,
      profileWindows: config.profile !== null,
      entry: join('bench', 'proxy-vault.js'),
      env: { NODE_ENV: 'development', PROXY_ALLOW_LOOPBACK: 'true', PROXY_CA_FILE: echo.caFile },
    });
    return { vault, echo };
  } catch (err) {
    await echo.stop();
    throw err;
  }
}

/** A floor server (bench/floor-server.js, or `start`) on `vault`'s database with a pool of the vault's size. */
function startFloor(config, name, vault, echo = null, start = startFloorServer) {
  if (vault.databaseUrl === null) {
    throw new Error(`the ${name} needs PostgreSQL (BENCH_DATABASE_URL)`);
  }
  return start({
    name,
    databaseUrl: vault.databaseUrl,
    poolSize: vault.databasePoolSize,
    masterKeys: vault.masterKeys,
    sandbox: vault.sandbox,
    echo,
    cpuSeconds: processCpuSeconds,
    cpuProfileDir: config.cpuProfileDir,
    profileWindows: config.profile !== null,
  });
}

/**
 * The run's servers around the vault `main`: mainCtx, forScenario(scenario) -> { target (whose CPU time the
 * row shows), origin (where its requests go), ctx (what its setup gets) }, running() (the processes to stop).
 */
function benchServers(config, main) {
  const mainCtx = scenarioContext(main);
  /** { vault, echo, ctx } once started. */
  let proxy = null;
  const floors = {
    floor: null,
    'proxy-floor': null,
    'nest-floor': null,
    'nest-proxy-floor': null,
    'react-floor': null,
  };
  /** { vault, ctx } once started. */
  let pkcs11 = null;
  /** The vault with AUDIT_ENABLED=false (auditing's baseline): { vault, ctx } once started. */
  let unaudited = null;

  const ensureProxy = async () => {
    if (proxy === null) {
      console.log('Starting the HTTPS echo server and the proxy vault for the proxy scenarios\n');
      const { vault, echo } = await startProxyServers(config);
      proxy = {
        vault,
        echo,
        ctx: {
          ...scenarioContext(vault),
          echo: { host: echo.host, port: echo.port, url: echo.url, proxyUrl: echo.proxyUrl },
        },
      };
    }
    return proxy;
  };

  const ensureFloor = async (kind) => {
    if (floors[kind] === null) {
      if (kind === 'floor') {
        console.log("Starting the floor server on the vault's database\n");
        floors.floor = await startFloor(config, 'floor server', main);
      } else if (kind === 'react-floor') {
        console.log("Starting the react floor and its sandbox workers on the vault's database\n");
        floors[kind] = await startFloor(config, 'react floor', main, null, startReactFloor);
      } else if (kind === 'nest-floor') {
        console.log("Starting the bare NestJS floor on the vault's database\n");
        floors[kind] = await startFloor(config, 'bare NestJS floor', main, null, startNestFloor);
      } else if (kind === 'nest-proxy-floor') {
        const { vault, echo } = await ensureProxy();
        console.log("Starting the bare NestJS proxy floor on the proxy vault's database\n");
        floors[kind] = await startFloor(config, 'bare NestJS proxy floor', vault, echo, startNestFloor);
      } else {
        const { vault, echo } = await ensureProxy();
        console.log("Starting the proxy floor server on the proxy vault's database\n");
        floors[kind] = await startFloor(config, 'proxy floor server', vault, echo);
      }
    }
    return floors[kind];
  };

  return {
    mainCtx,
    async forScenario(scenario) {
      switch (scenario.server) {
        case undefined:
          return { target: main, origin: main.baseUrl, ctx: mainCtx };
        case 'proxy':
        case 'echo': {
          const { vault, echo, ctx } = await ensureProxy();
          const target = scenario.server === 'proxy' ? vault : echo;
          return { target, origin: scenario.server === 'proxy' ? vault.baseUrl : echo.url, ctx };
        }
        case 'floor':
        case 'nest-floor':
        case 'proxy-floor':
        case 'nest-proxy-floor': {
          const floor = await ensureFloor(scenario.server);
          const ctx = scenario.server.endsWith('proxy-floor') ? proxy.ctx : mainCtx;
          return { target: floor, origin: floor.baseUrl, ctx };
        }
        case 'react-floor': {
          // Its setup sends one reaction to both, and checks the answers are the same bytes.
          const floor = await ensureFloor(scenario.server);
          return { target: floor, origin: floor.baseUrl, ctx: { ...mainCtx, floorUrl: floor.baseUrl } };
        }
        case 'pkcs11': {
          if (pkcs11 === null) {
            console.log('Starting the vault whose master key is in a SoftHSM2 token\n');
            const vault = await startPkcs11Vault(config);
            pkcs11 = { vault, ctx: scenarioContext(vault) };
          }
          return { target: pkcs11.vault, origin: pkcs11.vault.baseUrl, ctx: pkcs11.ctx };
        }
        case 'no-audit': {
          if (unaudited === null) {
            console.log('Starting a vault with AUDIT_ENABLED=false for the auditing baselines\n');
            const vault = await startServer({
              postgresUrl: config.postgresUrl,
              cpuProfileDir: config.cpuProfileDir,
              profileWindows: config.profile !== null,
              env: { AUDIT_ENABLED: 'false' },
            });
            unaudited = { vault, ctx: scenarioContext(vault) };
          }
          return { target: unaudited.vault, origin: unaudited.vault.baseUrl, ctx: unaudited.ctx };
        }
        default:
          throw new Error(
            `${scenario.name}: unknown server "${scenario.server}" (proxy, echo, floor, nest-floor, proxy-floor, nest-proxy-floor, react-floor, pkcs11, no-audit or none)`,
          );
      }
    },
    /** The helper servers started so far (the vault `main` not included). */
    running: () =>
      [
        proxy?.vault,
        proxy?.echo,
        floors.floor,
        floors['proxy-floor'],
        floors['nest-floor'],
        floors['nest-proxy-floor'],
        floors['react-floor'],
        pkcs11?.vault,
        unaudited?.vault,
      ].filter((p) => p !== null && p !== undefined),
    proxyStarted: () => proxy !== null,
  };
}

module.exports = { benchServers };
