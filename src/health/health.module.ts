import { Global, Module } from '@nestjs/common';
import { DatabaseHealth } from './database-health';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { UnsealController } from './unseal.controller';

/** Liveness and readiness for orchestrators; HealthService is global so shutdown can flag it. */
@Global()
@Module({
  controllers: [HealthController, UnsealController],
  providers: [DatabaseHealth, HealthService],
  exports: [HealthService],
})
export class HealthModule {}
