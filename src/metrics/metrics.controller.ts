import { All, Controller, Header, Headers, Inject, Req } from '@nestjs/common';
import type { Request } from 'express';
import { ApiExcludeController } from '@nestjs/swagger';
import { Public } from '../access/decorators';
import { ApiError } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { carriesMetricsToken } from './metrics-access';
import { MetricsService } from './metrics.service';

/**
 * /metrics on the main port: every tenant's traffic, so for the operator alone. It answers only to
 * `Authorization: Bearer <METRICS_TOKEN>` (and never when METRICS_PORT serves it elsewhere); any other
 * request, with or without a tenant's key and whatever its method, gets the 404 of a path that does not
 * exist (every method is routed here, so no 405 lists the methods of a path that "does not exist"). Not in
 * the OpenAPI document: it is not part of the tenants' API.
 */
@ApiExcludeController()
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @All()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  async scrape(
    @Req() req: Request,
    @Headers('authorization') authorization: string | undefined,
  ): Promise<string> {
    if (this.config.metricsPort !== null || !carriesMetricsToken(authorization, this.config.metricsToken)) {
      throw new ApiError(404, 'The requested resource was not found.');
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      throw new ApiError(405, 'This resource allows GET, HEAD.', undefined, { Allow: 'GET, HEAD' });
    }
    return this.metrics.text();
  }
}
