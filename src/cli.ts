/**
 * Operator commands: `npm run cli -- <command> [options]` (or `node dist/src/cli.js <command>` in the image).
 * Each command opens the configured database itself, does one thing, and exits.
 */
import { plainName } from './common/display-name';
import { ConsoleLogger, INestApplicationContext, LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createConnection } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { ApiError } from './common/api-error';
import { validatePlain } from './common/validation';
import { AppConfig, ConfigError, loadConfig, LogLevel } from './config/app-config';
import { ReactorFormulaBodyDto } from './reactor-formulas/dto/reactor-formula.dto';
import { ReactorFormulasService } from './reactor-formulas/reactor-formulas.service';
import { openDatabase } from './database/database';
import { DatabaseInUseError } from './database/embedded-postgres';
import { TenantKeysService } from './crypto/tenant-keys.service';
import { canonicalEmail, emailRefusal } from './tenants/email';
import { TenantsService } from './tenants/tenants.service';
import { ReencryptionService } from './tokens/reencryption.service';

/** Wrong usage: the message and the command's usage are printed, exit code 2. */
class UsageError extends Error {}
/** An expected failure with a message meant for the operator (no stack), exit code 1. */
class CliError extends Error {}

interface Command {
  usage: string;
  summary: string;
  run(args: string[], config: AppConfig): Promise<void>;
}

const COMMANDS: Record<string, Command> = {
  'tenant:create': {
    usage: 'tenant:create --name <name> --owner-email <email> [--json]',
    summary: 'Create a tenant, its OWNER member and a management application; print its key once.',
    run: createTenant,
  },
  migrate: {
    usage: 'migrate',
    summary: 'Apply pending database migrations (the service also applies them at boot).',
    run: migrate,
  },
  'keys:rotate-master': {
    usage: 'keys:rotate-master',
    summary:
      'Re-wrap every tenant key under the first key of VAULT_MASTER_KEYS (list the old ones after it). Online, resumable.',
    run: (args, config) => {
      parse(args, {});
      if (config.masterKeys === null) {
        throw new CliError(
          'VAULT_MASTER_KEYS is not set: put the new master key first and the old ones after it.',
        );
      }
      return withAppContext(config, async (app) => {
        const moved = await app.get(TenantKeysService).rewrapUnderActiveMaster();
        out(
          `Re-wrapped ${moved} tenant key(s) under master key ${app.get(TenantKeysService).masterKeyring.activeKeyId}.`,
        );
      });
    },
  },
  'keys:rotate-tenant': {
    usage: 'keys:rotate-tenant --tenant <tenant id>',
    summary:
      'Create a new data key for the tenant; new writes use it (run keys:reencrypt to move old tokens).',
    run: (args, config) => {
      const { values } = parse(args, { tenant: { type: 'string' } });
      const tenantId = typeof values.tenant === 'string' ? values.tenant : '';
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(tenantId)) {
        throw new UsageError('--tenant must be a tenant id (UUID)');
      }
      return withAppContext(config, async (app) => {
        const version = await app.get(TenantKeysService).rotateDataKey(tenantId);
        out(`Tenant ${tenantId} now writes with data key version ${version}.`);
      });
    },
  },
  'keys:reencrypt': {
    usage: 'keys:reencrypt [--batch-size <n>]',
    summary: "Move every token to its tenant's newest data key, in batches. Safe to interrupt and run again.",
    run: (args, config) => {
      const { values } = parse(args, { 'batch-size': { type: 'string' } });
      const batchSize = values['batch-size'] === undefined ? 500 : Number(values['batch-size']);
      if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10000) {
        throw new UsageError('--batch-size must be an integer from 1 to 10000');
      }
      return withAppContext(config, async (app) => {
        const total = await app
          .get(ReencryptionService)
          .reencryptAll(batchSize, (p) =>
            fail(`tenant ${p.tenantId}: ${p.reencrypted} token(s) re-encrypted`),
          );
        out(`Re-encrypted ${total} token(s).`);
      });
    },
  },
  'formula:create-official': {
    usage: 'formula:create-official --file <formula.json>',
    summary:
      'Publish an official reactor formula (read-only to tenants) from a JSON file in the API body shape.',
    run: createOfficialFormula,
  },
  help: {
    usage: 'help [command]',
    summary: 'Show this help.',
    run: (args) => {
      printHelp(args[0]);
      return Promise.resolve();
    },
  },
};

function findCommand(name: string): Command | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

function printHelp(command?: string, write: (text: string) => void = out): void {
  const known = command !== undefined ? findCommand(command) : undefined;
  if (known !== undefined) {
    write(`Usage: npm run cli -- ${known.usage}\n\n${known.summary}`);
    return;
  }
  write(
    [
      'Token Vault operator commands',
      '',
      'Usage: npm run cli -- <command> [options]     (in the container: node dist/src/cli.js <command>)',
      '',
      ...Object.values(COMMANDS).map((c) => `  ${c.usage}\n      ${c.summary}`),
      '',
      'The database comes from the same environment as the service: DATABASE_URL for PostgreSQL, otherwise',
      'the embedded database under DATA_DIR (default ./data). The embedded database can be opened by one',
      'process at a time: stop the server before running a command on it.',
    ].join('\n'),
  );
}

async function createTenant(args: string[], config: AppConfig): Promise<void> {
  const { values } = parse(args, {
    name: { type: 'string' },
    'owner-email': { type: 'string' },
    json: { type: 'boolean' },
  });
  const name = typeof values.name === 'string' ? plainName(values.name) : '';
  const ownerEmail = typeof values['owner-email'] === 'string' ? canonicalEmail(values['owner-email']) : '';
  if (name === '' || name.length > 200) {
    throw new UsageError('--name is required (1 to 200 characters)');
  }
  if (ownerEmail === '' || emailRefusal(ownerEmail) !== null) {
    throw new UsageError('--owner-email is required and must be an ASCII e-mail address (see README)');
  }
  const created = await withAppContext(config, (app) =>
    app.get(TenantsService).createTenant(name, ownerEmail),
  );
  if (values.json === true) {
    out(
      JSON.stringify({
        tenant_id: created.tenant.id,
        name: created.tenant.name,
        application_id: created.application.id,
        key: created.key,
      }),
    );
    return;
  }
  out(
    [
      `Created tenant "${created.tenant.name}" (${created.tenant.id}) owned by ${ownerEmail}.`,
      `Management application: ${created.application.id}`,
      `Management key (shown once, store it now): ${created.key}`,
    ].join('\n'),
  );
}

async function createOfficialFormula(args: string[], config: AppConfig): Promise<void> {
  const { values } = parse(args, { file: { type: 'string' } });
  if (typeof values.file !== 'string' || values.file === '') {
    throw new UsageError(
      '--file is required: a JSON file with name, code, configuration and request_parameters',
    );
  }
  let body: unknown;
  try {
    body = JSON.parse(readFileSync(values.file, 'utf8'));
  } catch (err) {
    throw new CliError(`${values.file} could not be read as JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new CliError(`${values.file} must hold one JSON object`);
  }
  const created = await withAppContext(config, async (app) => {
    try {
      const dto = validatePlain(ReactorFormulaBodyDto, { ...body, type: 'official' });
      return await app.get(ReactorFormulasService).createOfficial(dto);
    } catch (err) {
      if (err instanceof ApiError) {
        throw new CliError(`${err.detail} ${JSON.stringify(err.errors ?? {})}`);
      }
      throw err;
    }
  });
  out(`Published official formula "${created.name}" (${created.id}).`);
}

async function migrate(args: string[], config: AppConfig): Promise<void> {
  parse(args, {});
  await assertEmbeddedDatabaseFree(config);
  const database = await openDatabase({ ...config, migrationsRun: false });
  const dataSource = new DataSource(database.options);
  try {
    await dataSource.initialize();
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    const where = database.embedded ? `Embedded database in ${config.dataDir}` : 'PostgreSQL';
    const total = dataSource.migrations.length;
    out(
      applied.length === 0
        ? `${where}: the schema is up to date (${total} migration${total === 1 ? '' : 's'}).`
        : `${where}: applied ${applied.map((m) => m.name).join(', ')}.`,
    );
  } finally {
    if (dataSource.isInitialized) {
      await dataSource.destroy();
    }
    await database.close();
  }
}

/** The application's modules without the HTTP layer: services as the server runs them. */
async function withAppContext<T>(
  config: AppConfig,
  fn: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  await assertEmbeddedDatabaseFree(config);
  const database = await openDatabase(config);
  try {
    const app = await NestFactory.createApplicationContext(
      AppModule.register({ config, database, logStream: process.stderr }),
      {
        logger: new StderrLogger({
          logLevels: nestLevels(config.logLevel),
          colors: process.stderr.isTTY === true,
        }),
        abortOnError: false,
      },
    );
    try {
      return await fn(app);
    } finally {
      await app.close();
    }
  } finally {
    await database.close();
  }
}

/**
 * PGlite takes no lock on its folder: a second process would open the server's database and corrupt it.
 * A running server answers on the socket inside DATA_DIR, so refuse before opening anything, with a message
 * that says what to do. (When that path is too long for a Unix socket the server's socket lives in a private
 * temporary folder instead; the pid lock that openDatabase takes in DATA_DIR still refuses the command.)
 */
async function assertEmbeddedDatabaseFree(config: AppConfig): Promise<void> {
  if (config.databaseUrl !== null) {
    return;
  }
  const socketPath = join(config.dataDir, 'db', '.s.PGSQL.5432');
  const inUse = await new Promise<boolean>((resolve) => {
    const socket = createConnection({ path: socketPath });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    // ENOENT (never started) or ECONNREFUSED (a socket file left by a stopped server): free.
    socket.once('error', () => resolve(false));
  });
  if (inUse) {
    throw new CliError(
      `The embedded database in ${config.dataDir} is in use: Token Vault is running on it.\n` +
        'Stop the server and run the command again (the embedded database admits one process at a time).',
    );
  }
}

/** Nest's console logger on stderr, so stdout carries only the command's result (a key, JSON). */
class StderrLogger extends ConsoleLogger {
  protected override printMessages(
    messages: unknown[],
    context?: string,
    logLevel?: NestLogLevel,
    _writeStreamType?: 'stdout' | 'stderr',
    errorStack?: unknown,
  ): void {
    super.printMessages(messages, context, logLevel, 'stderr', errorStack);
  }
}

const NEST_LEVELS: NestLogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];
const LEVEL_COUNT: Record<LogLevel, number> = {
  silent: 0,
  fatal: 1,
  error: 2,
  warn: 3,
  info: 4,
  debug: 5,
  trace: 6,
};

function nestLevels(level: LogLevel): NestLogLevel[] {
  return NEST_LEVELS.slice(0, LEVEL_COUNT[level]);
}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

function parse(args: string[], options: OptionSpec): ReturnType<typeof parseArgs> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (err) {
    // node:util reports unknown options and missing values with a readable message.
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

function fail(text: string): void {
  process.stderr.write(`${text}\n`);
}

async function main(argv: string[]): Promise<number> {
  const [name = 'help', ...args] = argv;
  if (name === '--help' || name === '-h') {
    printHelp();
    return 0;
  }
  const command = findCommand(name);
  if (command === undefined) {
    fail(`Unknown command: ${name}\n`);
    printHelp(undefined, fail);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    printHelp(name);
    return 0;
  }
  try {
    // The CLI logs warnings and errors only, unless LOG_LEVEL says otherwise.
    const config = loadConfig({ ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' });
    await command.run(args, config);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      fail(`${err.message}\nUsage: npm run cli -- ${command.usage}`);
      return 2;
    }
    if (err instanceof ConfigError) {
      fail(`Configuration error: ${err.message}`);
      return 1;
    }
    if (err instanceof CliError || err instanceof DatabaseInUseError) {
      fail(err.message);
      return 1;
    }
    fail(`${name} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}

if (require.main === module) {
  // Exit explicitly: a command is done when main() settles, whatever handles a library left open.
  void main(process.argv.slice(2)).then((code) => process.exit(code));
}
