import { Global, Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { MetricsController } from './metrics.controller';
import { MetricsPort } from './metrics-port';
import { MetricsService } from './metrics.service';

/** Liveness, readiness and Prometheus metrics; MetricsService is global so any module can add series. */
@Global()
@Module({
  controllers: [HealthController, MetricsController],
  providers: [MetricsService, MetricsPort],
  exports: [MetricsService],
})
export class HealthModule {}
