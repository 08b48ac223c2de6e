import { DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { DestinationStream } from 'pino';
import { ApplicationsModule } from './applications/applications.module';
import { AuthModule } from './auth/auth.module';
import { ProblemDetailsFilter } from './common/problem-details.filter';
import { createValidationPipe } from './common/validation';
import { ClockModule } from './common/clock';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { CryptoModule } from './crypto/crypto.module';
import { DatabaseRuntime } from './database/database';
import { ChangeFeedModule } from './database/change-feed';
import { DatabaseInfoModule } from './database/database-info.module';
import { DatabaseModule } from './database/database.module';
import { ExpressionsModule } from './expressions';
import { HealthModule } from './health/health.module';
import { IdempotencyModule } from './idempotency/idempotency.module';
import { JobsModule } from './jobs/jobs.module';
import { SCHEMA } from './entities';
import { LoggingModule } from './logging';
import { MetricsModule } from './metrics/metrics.module';
import { RateLimitsModule } from './rate-limits/rate-limits.module';
import { SandboxModule } from './sandbox/sandbox.module';
import { ReactorFormulasModule } from './reactor-formulas/reactor-formulas.module';
import { ReactorsModule } from './reactors/reactors.module';
import { InvitationsModule } from './tenants/invitations/invitations.module';
import { OutboundModule, OutboundOverrides } from './outbound';
import { AuditModule } from './audit/audit.module';
import { ProxiesModule } from './proxies/proxies.module';
import { TenantsModule } from './tenants/tenants.module';
import { TokensModule } from './tokens/tokens.module';
import { TokenIntentsModule } from './token-intents/token-intents.module';
import { EventsModule } from './events/events';
import { WebhooksModule } from './webhooks/webhooks.module';
import { ClientKeysModule } from './client-keys/client-keys.module';
import { SessionsModule } from './sessions/sessions.module';
import { DocumentsModule } from './documents/documents.module';

export interface AppModuleOptions {
  config: AppConfig;
  database: DatabaseRuntime;
  /** Where JSON logs go (stdout by default; tests capture them). */
  logStream?: DestinationStream;
  /** Test seams of the outbound client (resolver, connector); production uses the defaults. */
  outbound?: OutboundOverrides;
}

@Module({})
export class AppModule {
  static register({ config, database, logStream, outbound }: AppModuleOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseInfoModule.forRoot(database),
        LoggingModule.forRoot(config, logStream),
        TypeOrmModule.forRoot({ ...database.options, ...SCHEMA, retryAttempts: 20, retryDelay: 250 }),
        ScheduleModule.forRoot(),
        ClockModule,
        DatabaseModule,
        EventsModule,
        ChangeFeedModule,
        CryptoModule,
        ExpressionsModule,
        OutboundModule.forRoot(outbound),
        // Express tries routes one by one in the order modules are first imported: the hot routes (tokens,
        // the proxy, reactions) go first so a reveal is not matched against 50 management routes before its own.
        TokensModule,
        TokenIntentsModule,
        ProxiesModule,
        ReactorsModule,
        AuthModule,
        IdempotencyModule,
        ApplicationsModule,
        TenantsModule,
        InvitationsModule,
        HealthModule,
        MetricsModule,
        AuditModule,
        RateLimitsModule,
        SandboxModule,
        ReactorFormulasModule,
        WebhooksModule,
        ClientKeysModule,
        SessionsModule,
        DocumentsModule,
        JobsModule,
      ],
      providers: [
        { provide: APP_PIPE, useFactory: createValidationPipe },
        { provide: APP_FILTER, useClass: ProblemDetailsFilter },
      ],
    };
  }
}
