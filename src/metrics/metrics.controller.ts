import { Controller, Get, Header, Headers, Inject } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../access/decorators';
import { ApiError } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { carriesMetricsToken } from './metrics-access';
import { MetricsService } from './metrics.service';

/**
 * /metrics on the main port: every tenant's traffic, so for the operator alone. It answers only to
 * `Authorization: Bearer <METRICS_TOKEN>` (and never when METRICS_PORT serves it elsewhere); any other
 * request, with or without a tenant's key, gets the 404 of a path that does not exist. Not in the OpenAPI
 * document: it is not part of the tenants' API.
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(@Headers('authorization') authorization: string | undefined): Promise<string> {
    if (this.config.metricsPort !== null || !carriesMetricsToken(authorization, this.config.metricsToken)) {
      throw new ApiError(404, 'The requested resource was not found.');
    }
    return this.metrics.text();
  }
}
