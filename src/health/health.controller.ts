import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../access/decorators';
import { HealthService, Readiness } from './health.service';

@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOperation({ summary: 'Liveness', description: 'The process is up. No key needed.' })
  @ApiOkResponse({ description: 'The process is up.' })
  live(): { status: string } {
    return { status: 'ok' };
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
  @ApiOperation({
    summary: 'Readiness probe',
    description:
      'The database answers, migrations are applied, first-run setup is done, the master keys are loaded and the sandbox is up: 200 listing them, or 503 naming the failing parts in `errors`. `notifications` is `degraded` (with the reason under `degraded`, still 200) while change notifications from other replicas cannot be relied on, for example behind a pooler in transaction mode: cached keys then live at most 1 s. No key needed.',
  })
  @ApiOkResponse({ description: 'Every part works; `checks` lists them.' })
  @ApiServiceUnavailableResponse({ description: 'A part does not work; `errors` names it and why.' })
  ready(): Promise<Readiness> {
    return this.health.ready();
  }
}
