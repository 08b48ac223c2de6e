import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { Public } from '../access/decorators';
import { HealthService, Readiness } from './health.service';

@ApiTags('Health')
@Public()
@Controller('health')
export class HealthController {
  constructor(private readonly health: HealthService) {}

  @Get()
  @ApiOkResponse({ description: 'The process is up.' })
  live(): { status: string } {
    return { status: 'ok' };
  }

  @Get('live')
  @ApiOkResponse({ description: 'The process serves requests.' })
  @ApiServiceUnavailableResponse({ description: 'The process is shutting down.' })
  liveness(): { status: string } {
    return this.health.live();
  }

  @Get('ready')
  @ApiOkResponse({ description: 'Every part works; `checks` lists them.' })
  @ApiServiceUnavailableResponse({ description: 'A part does not work; `errors` names it and why.' })
  ready(): Promise<Readiness> {
    return this.health.ready();
  }
}
