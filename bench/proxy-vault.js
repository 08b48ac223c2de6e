'use strict';
/**
 * The vault of the proxy scenarios: src/main.ts's startup (configuration from the environment, createApp,
 * listen on HOST:PORT, the default tenant from VAULT_BOOTSTRAP_API_KEY, SIGTERM/SIGINT → close, exit 0), with
 * one difference: the outbound client's resolver maps the bench echo server's host name to 127.0.0.1 and fails
 * every other name, so no real DNS is asked and nothing leaves the machine. bench/server.js starts it with
 * NODE_ENV=development, PROXY_ALLOW_LOOPBACK=true and PROXY_CA_FILE=<the bench CA> (both refused in production).
 */
const { createApp } = require('../dist/src/app');
const { loadConfig } = require('../dist/src/config/app-config');
const { TenantsService } = require('../dist/src/tenants/tenants.service');
const { HealthService } = require('../dist/src/health/health.service');
const { ECHO_HOST } = require('./echo-server');

/** The OutboundResolver: ECHO_HOST → 127.0.0.1, any other name fails as a name that does not exist. */
async function benchResolver(hostname) {
  if (hostname.toLowerCase() === ECHO_HOST) {
    return [{ address: '127.0.0.1', family: 4 }];
  }
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (bench resolver)`), { code: 'ENOTFOUND' });
}

async function main() {
  const config = loadConfig();
  const { app, close } = await createApp(config, { outbound: { resolver: benchResolver } });
  // As main.ts: not ready until the default tenant exists, so the bench never calls with a key not yet known.
  const firstRunSetup = app.get(HealthService).firstRunSetup();
  try {
    await app.listen(config.port, config.host);
  } catch (err) {
    await close();
    throw err;
  }
  await app.get(TenantsService).bootstrap(config.bootstrapApiKey ?? undefined);
  firstRunSetup.done();
  process.stdout.write(`Token Vault (proxy bench) listening on ${config.host}:${config.port}\n`);

  let stopping = false;
  const stop = async () => {
    if (stopping) {
      return;
    }
    stopping = true;
    const server = app.getHttpServer();
    const forceAfter = setTimeout(() => server.closeAllConnections(), 10_000).unref();
    await new Promise((resolve) => server.close(() => resolve()));
    clearTimeout(forceAfter);
    await close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err) => {
  process.stderr.write(
    `Token Vault (proxy bench) failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
