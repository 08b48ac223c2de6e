import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsPort } from './metrics-port';
import { MetricsService } from './metrics.service';

/** Prometheus metrics; MetricsService is global so any module (tokens, proxies, the sandbox) can add series. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [MetricsService, MetricsPort],
  exports: [MetricsService],
})
export class MetricsModule {}
