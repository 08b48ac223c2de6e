import { createApp } from './app';
import { loadConfig, ConfigError } from './config/app-config';
import { DatabaseInUseError } from './database/embedded-postgres';
import { TenantsService } from './tenants/tenants.service';

async function main(): Promise<void> {
  const config = loadConfig();
  const { app, close } = await createApp(config);
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  const created = await app.get(TenantsService).bootstrap(config.bootstrapApiKey ?? undefined);
  const url = config.publicUrl;
  const lines = [
    '',
    `Token Vault is listening on ${url} (${config.databaseUrl === null ? `embedded database in ${config.dataDir}` : 'PostgreSQL'})`,
    `API explorer: ${url}/docs`,
  ];
  if (created !== null) {
    lines.push(
      `Created the default tenant ${created.tenant.id} with a management application.`,
      config.bootstrapApiKey !== null
        ? 'Its key is the VAULT_BOOTSTRAP_API_KEY you set.'
        : `Its key (shown once, store it now): ${created.key}`,
      `Try: curl -H "BT-API-KEY: <key>" ${url}/applications/key`,
    );
  }
  process.stdout.write(`${lines.join('\n')}\n\n`);
  process.once('SIGTERM', () => void close());
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${err.message}\n`);
  } else if (err instanceof DatabaseInUseError) {
    process.stderr.write(`Token Vault cannot start: ${err.message}\n`);
  } else {
    process.stderr.write(`Token Vault failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
  process.exit(1);
});
