import { Controller, Get, UseGuards } from '@nestjs/common';
import {
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { Public } from '../access/decorators';
import { HealthDto } from './dto/health.dto';
import { HealthRateLimit } from './health-rate-limit';
import { HealthService, Readiness } from './health.service';

@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({
    summary: 'Liveness',
    description: "The process is up, and the vault's version. No key needed.",
  })
  @ApiOkResponse({ description: 'The process is up.', type: HealthDto })
  up(): HealthDto {
    return this.health.up();
  }

  @Get('live')
  @ApiOperation({
    summary: 'Liveness probe',
    description:
      'The process serves requests: 200 until shutdown begins, then 503. Nothing else is checked. No key needed.',
  })
  @ApiOkResponse({ description: 'The process serves requests.' })
  @ApiServiceUnavailableResponse({ description: 'The process is shutting down.' })
  liveness(): { status: string } {
    return this.health.live();
  }

  @Get('ready')
  @UseGuards(HealthRateLimit)
  @ApiOperation({
    summary: 'Readiness probe',
    description:
      'The database answers, migrations are applied, first-run setup is done, the master keys are loaded and the sandbox is up: 200 listing them, or 503 naming the failing parts in `errors`. `notifications` is `degraded` (with the reason under `degraded`, still 200) while change notifications from other replicas cannot be relied on, for example behind a pooler in transaction mode: cached keys then live at most 1 s. The master-key check is reused for 5 s. No key needed; limited per client address (RATE_LIMIT_HEALTH, 300 in 10 s by default).',
  })
  @ApiOkResponse({ description: 'Every part works; `checks` lists them.' })
  @ApiServiceUnavailableResponse({ description: 'A part does not work; `errors` names it and why.' })
  @ApiTooManyRequestsResponse({ description: 'Too many readiness requests from this address.' })
  ready(): Promise<Readiness> {
    return this.health.ready();
  }
}
