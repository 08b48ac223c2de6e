import { Body, Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiSecurity,
  ApiTags,
} from '@nestjs/swagger';
import { API_KEY_SCHEME, CurrentPrincipal, RequirePermission } from '../access/decorators';
import { ALL_PERMISSIONS, PERMISSIONS, permissionAllowedFor } from '../access/permissions';
import { PERMISSION_DESCRIPTIONS } from '../access/permission-descriptions';
import { Principal } from '../access/principal';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import { ApplicationsService } from './applications.service';
import {
  ApplicationDto,
  ApplicationPageDto,
  CreateApplicationDto,
  ListApplicationsQueryDto,
  ListPermissionsQueryDto,
  PermissionDto,
  UpdateApplicationDto,
} from './dto/application.dto';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Applications')
@IdempotentWrites()
@Controller('applications')
export class ApplicationsController {
  constructor(private readonly applications: ApplicationsService) {}

  @Post()
  @RequirePermission('application:create')
  @ApiOperation({
    summary: 'Create an application',
    description: 'Management only. The answer carries the API key, once.',
  })
  @ApiCreatedResponse({
    type: ApplicationDto,
    description: 'The created application with its key (shown once).',
  })
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateApplicationDto): Promise<ApplicationDto> {
    return this.applications.create(p, dto);
  }

  @Get()
  @RequirePermission('application:read')
  @ApiOperation({ summary: 'List applications', description: 'Filter by `id` and `type` (both repeatable).' })
  @ApiOkResponse({ type: ApplicationPageDto })
  list(
    @CurrentPrincipal() p: Principal,
    @Query() query: ListApplicationsQueryDto,
  ): Promise<Page<ApplicationDto>> {
    return this.applications.list(p, query);
  }

  @Get('key')
  @ApiSecurity(API_KEY_SCHEME)
  @ApiOperation({
    summary: 'The calling application',
    description: 'The application the BT-API-KEY belongs to.',
  })
  @ApiOkResponse({ type: ApplicationDto, description: 'The application the BT-API-KEY belongs to.' })
  self(@CurrentPrincipal() p: Principal): Promise<ApplicationDto> {
    return this.applications.get(p, p.applicationId);
  }

  @Get(':id')
  @RequirePermission('application:read')
  @ApiOperation({ summary: 'Get an application', description: 'Never includes its key.' })
  @ApiOkResponse({ type: ApplicationDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ApplicationDto> {
    return this.applications.get(p, id);
  }

  @Put(':id')
  @RequirePermission('application:update')
  @ApiOperation({
    summary: 'Replace an application',
    description:
      'Name, permissions and access rules. Once an application has rules, they govern all of its token access.',
  })
  @ApiOkResponse({ type: ApplicationDto })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: UpdateApplicationDto,
  ): Promise<ApplicationDto> {
    return this.applications.update(p, id, dto);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('application:delete')
  @ApiOperation({ summary: 'Delete an application', description: 'Its key stops working at once.' })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.applications.delete(p, id);
  }

  @Post(':id/regenerate')
  @HttpCode(200)
  @RequirePermission('application:update')
  @ApiOperation({
    summary: 'Regenerate the key',
    description: 'Answers with the new key; the old one stops working.',
  })
  @ApiOkResponse({
    type: ApplicationDto,
    description: 'The application with its new key; the old key stops working.',
  })
  regenerate(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ApplicationDto> {
    return this.applications.regenerate(p, id);
  }
}

@ApiTags('Applications')
@Controller('permissions')
export class PermissionsController {
  @Get()
  @ApiSecurity(API_KEY_SCHEME)
  @ApiOperation({
    summary: 'List permissions',
    description:
      'Every permission, what it allows and the application types that may hold it; filter by `application_type`.',
  })
  @ApiOkResponse({ type: [PermissionDto] })
  list(@Query() query: ListPermissionsQueryDto): PermissionDto[] {
    return ALL_PERMISSIONS.filter(
      (type) => query.application_type === undefined || permissionAllowedFor(type, query.application_type),
    ).map((type) => ({
      type,
      description: PERMISSION_DESCRIPTIONS[type],
      application_types: [...PERMISSIONS[type]],
    }));
  }
}
