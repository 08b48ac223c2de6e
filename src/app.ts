import { DynamicModule, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Logger } from 'nestjs-pino';
import type { DestinationStream } from 'pino';
import { AppModule } from './app.module';
import { AppConfig } from './config/app-config';
import { DatabaseRuntime, openDatabase } from './database/database';
import type { OutboundOverrides } from './outbound';
import { serveOpenApi } from './openapi';
import { MetricsService } from './metrics/metrics.service';
import { recordRequest } from './metrics/request-metrics';
import { applyServerLimits } from './common/server-limits';
import { fastJsonReplies } from './common/json-replies';
import { json, urlencoded } from 'express';
import {
  bodyParserErrors,
  checkParsedBody,
  exceptOnProxy,
  jsonBodiesOnly,
  noteRawBody,
} from './common/request-body';
import { securityHeaders } from './common/security-headers';
import { corsHeaders } from './common/cors';
import { TrustedProxies } from './common/client-address';
import { AuditService } from './audit/audit.service';
import { originOf } from './audit/request-origin';
import { enterRequestContext, requestContexts } from './common/request-context';
import { APP_LOG, logRequest } from './logging';

export interface CreateAppOptions {
  /** An already opened database (tests); otherwise opened from the config. */
  database?: DatabaseRuntime;
  /** Embedded PGlite in memory instead of under DATA_DIR (tools that need no persistence). */
  inMemoryDatabase?: boolean;
  logStream?: DestinationStream;
  docs?: boolean;
  /** Makes the Nest application from the root module; NestFactory.create unless given. */
  nestFactory?: NestAppFactory;
  /** Test seams of the outbound client (e.g. a resolver mapping a test host name to 127.0.0.1). */
  outbound?: OutboundOverrides;
}

/**
 * Turns the root module into the Nest application, the one step of createApp a test may replace: with
 * Nest's TestingModule, to swap providers for test doubles (test/support/test-app.ts). Everything createApp
 * does before and after it stays as production runs it.
 */
export type NestAppFactory = (
  root: DynamicModule,
  options: NestApplicationOptions,
) => Promise<NestExpressApplication>;

const productionFactory: NestAppFactory = (root, options) =>
  NestFactory.create<NestExpressApplication>(root, options);

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
    app = await (options.nestFactory ?? productionFactory)(
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
  const { maxConnections, lowered } = applyServerLimits(app.getHttpServer(), config.server);
  if (lowered) {
    app
      .get(Logger)
      .warn(
        { maxConnections },
        'HTTP_MAX_CONNECTIONS lowered to fit the open-files limit: raise it (ulimit -n, docker --ulimit nofile)',
      );
  }
  // Buffered boot logs are otherwise flushed only by listen(); tests and tools never listen.
  app.flushLogs();
  app.disable('x-powered-by');
  // Express's default ETag is an unsalted SHA-1 of the body: on a revealed card, a brute-forceable hash of it.
  app.set('etag', false);
  app.set('query parser', 'simple');
  fastJsonReplies(app.getHttpAdapter());
  const metrics = app.get(MetricsService);
  const audit = app.get(AuditService);
  // The one hook of a request: metrics and refusal audits of an answered one, and its log line.
  app.use(
    requestContexts(app.get(APP_LOG), new TrustedProxies(config.trustedProxies), (context, completed) => {
      const status = context.res.statusCode;
      if (completed) {
        recordRequest(metrics, context);
        if (status === 401 || status === 403) {
          void audit.recordRefusal(context.req, context.res, originOf(context));
        }
      }
      logRequest(context);
    }),
  );
  app.use(securityHeaders);
  app.use(corsHeaders(config.corsOrigins));
  app.use(jsonBodiesOnly);
  // Not strict: /tokenize and merge patches accept any JSON value at the top level.
  app.use(
    exceptOnProxy(
      json({
        limit: BODY_LIMIT,
        strict: false,
        type: ['application/json', 'application/*+json'],
        verify: noteRawBody,
      }),
    ),
  );
  // Only the form routes get here with a form body (jsonBodiesOnly refuses it elsewhere).
  app.use(exceptOnProxy(urlencoded({ limit: '16kb', extended: false, verify: noteRawBody })));
  app.use(bodyParserErrors, checkParsedBody);
  // After the body parsers: their stream callbacks would leave the context.
  app.use(enterRequestContext);
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
