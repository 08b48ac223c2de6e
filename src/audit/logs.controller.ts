import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { Page } from '../common/pagination';
import { ListLogsQueryDto, LogDto, LogEntityTypeDto, LogPageDto } from './dto/log.dto';
import { LogsService } from './logs.service';

@ApiTags('Logs')
@Controller('logs')
export class LogsController {
  constructor(private readonly logs: LogsService) {}

  @Get()
  @RequirePermission('log:read')
  @ApiOperation({
    summary: 'List audit logs',
    description:
      "The tenant's audit trail, newest first: who did what to which entity, when, from where, and whether it was allowed.",
  })
  @ApiOkResponse({ type: LogPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() query: ListLogsQueryDto): Promise<Page<LogDto>> {
    return this.logs.list(p, query);
  }

  @Get('entity-types')
  @RequirePermission('log:read')
  @ApiOperation({ summary: 'List the entity types of audit logs' })
  @ApiOkResponse({ type: [LogEntityTypeDto] })
  entityTypes(): LogEntityTypeDto[] {
    return this.logs.entityTypes();
  }
}
