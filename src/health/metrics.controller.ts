import { Controller, Get, Header, Headers, Inject } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { ApplicationsService } from '../applications/applications.service';
import { API_KEY_SCHEME, Public } from '../auth/decorators';
import { ApiError } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { MetricsService } from './metrics.service';

@ApiTags('Health')
@Public()
@Controller('metrics')
export class MetricsController {
  constructor(
    private readonly metrics: MetricsService,
    private readonly applications: ApplicationsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @Header('Content-Type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    summary: 'Prometheus metrics',
    description:
      'Request rate and latency by route template and status, process and event-loop metrics, database pool ' +
      'usage, purge and sandbox counts. Needs a management application key unless METRICS_PUBLIC=true; ' +
      'with METRICS_PORT set it is served only on that port.',
  })
  @ApiSecurity(API_KEY_SCHEME)
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text format.', schema: { type: 'string' } })
  async scrape(@Headers('bt-api-key') key: string | undefined): Promise<string> {
    if (this.config.metricsPort !== null) {
      throw ApiError.notFound('Resource');
    }
    if (!this.config.metricsPublic) {
      const principal = key === undefined ? null : await this.applications.authenticate(key);
      if (principal === null) {
        throw ApiError.unauthorized();
      }
      if (principal.applicationType !== 'management') {
        throw ApiError.forbidden('Metrics are for management applications.');
      }
    }
    return this.metrics.text();
  }
}
