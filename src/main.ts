// Before anything else loads: an older Node.js is refused in one line (see the file).
import './common/node-version';
// Then traces, when configured: the SDK starts before http, express and pg load (see the file).
import './tracing/start';
import { Logger } from '@nestjs/common';
import { createServer } from 'node:net';
import pretty from 'pino-pretty';
import { createApp } from './app';
import { AppConfig, ConfigError, loadConfig } from './config/app-config';
import { KeyProviderError } from './crypto/pkcs11-key-provider';
import { MasterKeysMismatchError } from './crypto/master-keyring.service';
import { DatabaseInUseError } from './database/embedded-postgres';
import { causeOf, RetryHandle, retryUntilDone } from './common/supervisor';
import { DatabaseHealth, NotReady } from './health/database-health';
import { HealthService } from './health/health.service';
import { TenantsService } from './tenants/tenants.service';
import { flushTracing } from './tracing/spans';

/** Thrown when the port is taken: one line for the operator, no stack. */
class PortInUseError extends Error {}

/** Fails before anything is opened or created (DATA_DIR, the database) when the port is taken. */
function assertPortFree(config: AppConfig): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => {
      reject(
        err.code === 'EADDRINUSE' || err.code === 'EACCES'
          ? new PortInUseError(
              `Port ${config.port} on ${config.host} is ${err.code === 'EACCES' ? 'not allowed' : 'already in use'}: set PORT to a free port (e.g. PORT=${config.port + 1} npm start).`,
            )
          : err,
      );
    });
    probe.listen(config.port, config.host, () => probe.close(() => resolve()));
  });
}

function banner(config: AppConfig, key: string | null, fromEnv: boolean): string {
  const url = config.publicUrl;
  const where = config.databaseUrl === null ? `embedded database in ${config.dataDir}` : 'PostgreSQL';
  const rule = '─'.repeat(78);
  const lines = [rule, ` Token Vault is running at ${url} (${where})`, ` API explorer:  ${url}/docs`];
  if (key !== null) {
    lines.push(
      fromEnv
        ? ' The default tenant was created; its management key is the VAULT_BOOTSTRAP_API_KEY you set.'
        : ` Management key of the default tenant (shown once, store it now):\n   ${key}`,
      ` Try it:  curl -s ${url}/applications/key -H "BT-API-KEY: ${fromEnv ? '$VAULT_BOOTSTRAP_API_KEY' : key}"`,
    );
  } else {
    lines.push(` Try it:  curl -s ${url}/applications/key -H "BT-API-KEY: <your management key>"`);
  }
  lines.push(' Stop with Ctrl+C (in-flight requests finish first).', rule);
  return `\n${lines.join('\n')}\n\n`;
}

async function main(): Promise<void> {
  const config = loadConfig();
  await assertPortFree(config);
  // Human-readable logs for a person at a terminal; JSON lines for everything else (and in production).
  const logStream =
    process.stdout.isTTY === true && config.nodeEnv !== 'production'
      ? pretty({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname' })
      : undefined;
  const { app, close } = await createApp(config, { logStream });
  // Not ready before the default tenant exists: a client waiting for readiness would get 401s.
  const firstRunSetup = app.get(HealthService).firstRunSetup();
  try {
    await app.listen(config.port, config.host);
  } catch (err) {
    await close();
    throw (err as NodeJS.ErrnoException).code === 'EADDRINUSE'
      ? new PortInUseError(`Port ${config.port} is already in use: set PORT to a free port.`)
      : err;
  }
  let firstRun: RetryHandle | null = null;
  const logger = new Logger('Shutdown');
  let stopping = false;
  const stop = async (signal: NodeJS.Signals): Promise<void> => {
    if (stopping) {
      return;
    }
    stopping = true;
    firstRun?.stop();
    const began = Date.now();
    logger.log(`${signal} received: shutting down (in-flight requests finish first)`);
    // Orchestrators polling /health/live and /health/ready on open connections see 503 from now on.
    app.get(HealthService).shuttingDown();
    // Stop accepting, let in-flight requests finish (idle keep-alive connections are closed at once),
    // then close the application and the database once.
    const server = app.getHttpServer();
    const forceAfter = setTimeout(() => server.closeAllConnections(), 10_000).unref();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(forceAfter);
    await close();
    await flushTracing();
    logger.log(`Shut down in ${Date.now() - began} ms`);
    process.exit(0);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));

  // The default tenant on a new database, then the banner. With MIGRATIONS_RUN=false the schema may not be
  // this build's yet: the server answers (readiness 503 naming `migrations`) and waits for the migrate
  // command instead of failing on a missing table.
  const setUp = async (): Promise<void> => {
    await app.get(DatabaseHealth).checkMigrations();
    const created = await app.get(TenantsService).bootstrap(config.bootstrapApiKey ?? undefined);
    firstRunSetup.done();
    process.stdout.write(banner(config, created?.key ?? null, config.bootstrapApiKey !== null));
  };
  if (config.migrationsRun) {
    await setUp();
  } else {
    const pending = await app
      .get(DatabaseHealth)
      .checkMigrations()
      .then(
        () => null,
        (err: unknown) => (err instanceof NotReady ? err.message : causeOf(err)),
      );
    if (pending === null) {
      await setUp();
    } else {
      new Logger('Migrations').warn(
        `MIGRATIONS_RUN=false and the database lacks this build's migrations (${pending}): /health/ready answers 503 and first-run setup waits until \`npm run migration:run\` (cli migrate) has run.`,
      );
      firstRun = retryUntilDone(new Logger('Migrations'), 'waiting for migrations', setUp, {
        initialMs: 1000,
        maxMs: 10_000,
      });
    }
  }
}

main().catch((err: unknown) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`Configuration error: ${err.message}\n`);
  } else if (
    err instanceof PortInUseError ||
    err instanceof DatabaseInUseError ||
    err instanceof MasterKeysMismatchError ||
    err instanceof KeyProviderError
  ) {
    process.stderr.write(`Token Vault cannot start: ${err.message}\n`);
  } else {
    process.stderr.write(`Token Vault failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  }
  process.exit(1);
});
