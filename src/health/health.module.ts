import { Global, Module } from '@nestjs/common';
import { DatabaseHealth } from './database-health';
import { HealthController } from './health.controller';
import { HealthService } from './health.service';
import { MetricsController } from './metrics.controller';
import { MetricsPort } from './metrics-port';
import { MetricsService } from './metrics.service';

/** Liveness, readiness and Prometheus metrics; MetricsService is global so any module can add series. */
@Global()
@Module({
  controllers: [HealthController, MetricsController],
  providers: [MetricsService, MetricsPort, DatabaseHealth, HealthService],
  exports: [MetricsService, HealthService],
})
export class HealthModule {}
