import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { DatabaseRuntime, openDatabase } from './database/database';
import type { OutboundOverrides } from './outbound';
import { serveOpenApi } from './openapi';

export interface CreateAppOptions {
  /** An already opened database (tests); otherwise opened from the config. */
  database?: DatabaseRuntime;
  /** Embedded PGlite in memory instead of under DATA_DIR (tools that need no persistence). */
  inMemoryDatabase?: boolean;
  logStream?: DestinationStream;
  docs?: boolean;
  /** Test seams of the outbound client (e.g. a resolver mapping a test host name to 127.0.0.1). */
  outbound?: OutboundOverrides;
}

export interface VaultApp {
  app: NestExpressApplication;
  close: () => Promise<void>;
}

export const BODY_LIMIT = '1mb';

/** Builds the whole application exactly as production runs it; main.ts only adds listen(). */
export async function createApp(config: AppConfig, options: CreateAppOptions = {}): Promise<VaultApp> {
  const database = options.database ?? (await openDatabase(config, { inMemory: options.inMemoryDatabase }));
  let app: NestExpressApplication;
  try {
    app = await NestFactory.create<NestExpressApplication>(
      AppModule.register({ config, database, logStream: options.logStream, outbound: options.outbound }),
      { bufferLogs: true, bodyParser: false },
    );
  } catch (err) {
    if (options.database === undefined) {
      await database.close();
    }
    throw err;
  }
  app.useLogger(app.get(Logger));
  // Buffered boot logs are otherwise flushed only by listen(); tests and tools never listen.
  app.flushLogs();
  app.disable('x-powered-by');
  // Express's default ETag is an unsalted SHA-1 of the body: on a revealed card, a brute-forceable hash of it.
  app.set('etag', false);
  app.set('query parser', 'simple');
  // Not strict: /tokenize and merge patches accept any JSON value at the top level.
  app.useBodyParser('json', {
    limit: BODY_LIMIT,
    strict: false,
    type: ['application/json', 'application/*+json'],
  });
  app.useBodyParser('urlencoded', { limit: BODY_LIMIT, extended: false });
  app.useBodyParser('text', { limit: BODY_LIMIT, type: ['text/*'] });
  if (options.docs !== false) {
    serveOpenApi(app);
  }
  await app.init();
  return {
    app,
    close: async () => {
      await app.close();
      if (options.database === undefined) {
        await database.close();
      }
    },
  };
}
