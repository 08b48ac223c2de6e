import { ConsoleLogger, INestApplicationContext, LogLevel as NestLogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { AppModule } from '../app.module';
import { AppConfig, LogLevel } from '../config/app-config';
import { openDatabase } from '../database/database';

/** What every operator command shares: its shape, argument parsing, output, and the application context. */

/** Wrong usage: the message and the command's usage are printed, exit code 2. */
export class UsageError extends Error {}
/** An expected failure with a message meant for the operator (no stack), exit code 1. */
export class CliError extends Error {}

export interface Command {
  usage: string;
  summary: string;
  run(args: string[], config: AppConfig): Promise<void>;
}

type OptionSpec = Record<string, { type: 'string' | 'boolean' }>;

export function parse(args: string[], options: OptionSpec): ReturnType<typeof parseArgs> {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: false });
  } catch (err) {
    // node:util reports unknown options and missing values with a readable message.
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

export function out(text: string): void {
  process.stdout.write(`${text}\n`);
}

export function fail(text: string): void {
  process.stderr.write(`${text}\n`);
}

/** The application's modules without the HTTP layer: services as the server runs them. */
export async function withAppContext<T>(
  config: AppConfig,
  fn: (app: INestApplicationContext) => Promise<T>,
): Promise<T> {
  await assertEmbeddedDatabaseFree(config);
  const database = await openDatabase(config);
  try {
    const app = await NestFactory.createApplicationContext(
      // A command never runs the vault's scheduled jobs: the servers do, and a cron tick in the command's
      // process would only add work and its warnings to the command's own output.
      AppModule.register({ config: { ...config, jobsEnabled: false }, database, logStream: process.stderr }),
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
export async function assertEmbeddedDatabaseFree(config: AppConfig): Promise<void> {
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
