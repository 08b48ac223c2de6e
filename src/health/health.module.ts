import { Global, MiddlewareConsumer, Module, NestModule } from '@nestjs/common';
import { DatabaseHealth } from './database-health';
import { HealthRepository } from './health.repository';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { PendingMigrationsMiddleware } from './pending-migrations.middleware';
import { PingController } from './ping.controller';
import { UnsealController } from './unseal.controller';

/** Liveness and readiness for orchestrators; HealthService is global so shutdown can flag it. */
@Global()
@Module({
  controllers: [HealthController, PingController, UnsealController],
  providers: [HealthRepository, DatabaseHealth, HealthService],
  exports: [HealthService],
})
export class HealthModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(PendingMigrationsMiddleware).forRoutes('*');
  }
}
