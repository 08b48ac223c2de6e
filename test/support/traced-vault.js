'use strict';
/**
 * The vault of the tracing tests: src/main.ts's startup order (traces first, when OTEL_EXPORTER_OTLP_ENDPOINT
 * is set, then the application; listen; the default tenant from VAULT_BOOTSTRAP_API_KEY; SIGTERM → close,
 * spans flushed, exit 0), with one difference: the outbound client's resolver maps TEST_DESTINATION_HOST to
 * 127.0.0.1 and fails every other name, so no real DNS is asked and nothing leaves the machine. The test
 * starts it with PROXY_ALLOW_LOOPBACK=true and PROXY_CA_FILE=<its CA> (both refused in production).
 */
require('../../dist/src/tracing/start');
const { createApp } = require('../../dist/src/app');
const { loadConfig } = require('../../dist/src/config/app-config');
const { TenantsService } = require('../../dist/src/tenants/tenants.service');
const { HealthService } = require('../../dist/src/health/health.service');
const { flushTracing } = require('../../dist/src/tracing/spans');

const DESTINATION = (process.env.TEST_DESTINATION_HOST ?? '').toLowerCase();

async function testResolver(hostname) {
  if (hostname.toLowerCase() === DESTINATION) {
    return [{ address: '127.0.0.1', family: 4 }];
  }
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (test resolver)`), { code: 'ENOTFOUND' });
}

async function main() {
  const config = loadConfig();
  const { app, close } = await createApp(config, { outbound: { resolver: testResolver } });
  const firstRunSetup = app.get(HealthService).firstRunSetup();
  await app.listen(config.port, config.host);
  await app.get(TenantsService).bootstrap(config.bootstrapApiKey ?? undefined);
  firstRunSetup.done();
  process.stdout.write(`Token Vault (traced test vault) listening on ${config.host}:${config.port}\n`);
  process.once('SIGTERM', () => {
    const server = app.getHttpServer();
    server.close(() =>
      close()
        .then(() => flushTracing())
        .then(() => process.exit(0)),
    );
    server.closeIdleConnections();
  });
}

main().catch((err) => {
  process.stderr.write(
    `traced test vault failed to start: ${err instanceof Error ? err.stack : String(err)}\n`,
  );
  process.exit(1);
});
