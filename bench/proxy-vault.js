'use strict';
/**
 * The vault for the proxy scenarios: started as src/main.ts starts it, except that its outbound resolver
 * answers the bench echo host with 127.0.0.1 (there is no DNS for it) and refuses every other name. It needs
 * PROXY_ALLOW_LOOPBACK=true and PROXY_CA_FILE, which the config refuses in production: bench/server.js
 * starts it with NODE_ENV=development.
 */
const { createApp } = require('../dist/src/app');
const { loadConfig } = require('../dist/src/config/app-config');
const { TenantsService } = require('../dist/src/tenants/tenants.service');
const { ECHO_HOST } = require('./echo-server');

async function resolver(hostname) {
  if (hostname === ECHO_HOST) {
    return [{ address: '127.0.0.1', family: 4 }];
  }
  throw Object.assign(new Error('bench resolver: unknown name'), { code: 'ENOTFOUND' });
}

async function main() {
  const config = loadConfig();
  const { app, close } = await createApp(config, { outbound: { resolver } });
  await app.listen(config.port, config.host);
  await app.get(TenantsService).bootstrap(config.bootstrapApiKey ?? undefined);
  const stop = async () => {
    const server = app.getHttpServer();
    await new Promise((resolve) => server.close(() => resolve()));
    await close();
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop());
  process.once('SIGINT', () => void stop());
}

main().catch((err) => {
  process.stderr.write(`bench proxy vault failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
