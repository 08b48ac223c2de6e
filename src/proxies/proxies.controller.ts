import { Body, Controller, Delete, Get, HttpCode, Patch, Post, Put, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
  ApiUnprocessableEntityResponse,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { RequireContentType } from '../common/content-type.guard';
import { definedFields } from '../common/defined-fields';
import { Page } from '../common/pagination';
import { UuidParam } from '../common/uuid-param';
import { ListProxiesQueryDto, PatchProxyDto, ProxyBodyDto, ProxyDto, ProxyPageDto } from './dto/proxy.dto';
import { ProxiesService } from './proxies.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

const DOES_NOT_COMPILE = 'The code does not compile (message with line and column).';

@ApiTags('Proxies')
@IdempotentWrites()
@Controller('proxies')
export class ProxiesController {
  constructor(private readonly proxies: ProxiesService) {}

  @Post()
  @RequirePermission('proxy:create')
  @ApiOperation({
    summary: 'Create a proxy',
    description:
      'A destination (HTTPS, DNS host name), optional request and response transforms, an optional ' +
      'application for `bt` and for detokenizing without auth, configuration (stored encrypted) and ' +
      '`require_auth` (default true). The answer carries the `key` that routes requests to it.',
  })
  @ApiCreatedResponse({ type: ProxyDto })
  @ApiUnprocessableEntityResponse({ description: DOES_NOT_COMPILE })
  create(@CurrentPrincipal() p: Principal, @Body() dto: ProxyBodyDto): Promise<ProxyDto> {
    return this.proxies.create(p, dto);
  }

  @Get()
  @RequirePermission('proxy:read')
  @ApiOperation({ summary: 'List proxies' })
  @ApiOkResponse({ type: ProxyPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() query: ListProxiesQueryDto): Promise<Page<ProxyDto>> {
    return this.proxies.list(p, query);
  }

  @Get(':id')
  @RequirePermission('proxy:read')
  @ApiOperation({ summary: 'Get a proxy' })
  @ApiOkResponse({ type: ProxyDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ProxyDto> {
    return this.proxies.get(p, id);
  }

  @Put(':id')
  @RequirePermission('proxy:update')
  @ApiOperation({ summary: 'Replace a proxy', description: 'Same fields as create; the key stays.' })
  @ApiOkResponse({ type: ProxyDto })
  @ApiUnprocessableEntityResponse({ description: DOES_NOT_COMPILE })
  update(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: ProxyBodyDto,
  ): Promise<ProxyDto> {
    return this.proxies.update(p, id, dto);
  }

  @Patch(':id')
  @RequirePermission('proxy:update')
  @RequireContentType('application/merge-patch+json')
  @ApiOperation({
    summary: 'Update a proxy',
    description:
      'Content-Type application/merge-patch+json (RFC 7386): configuration and the transforms merge, other ' +
      'fields replace; null removes a transform, the application or a configuration entry. The key stays.',
  })
  @ApiConsumes('application/merge-patch+json')
  @ApiBody({ type: PatchProxyDto, description: 'application/merge-patch+json (RFC 7386)' })
  @ApiOkResponse({ type: ProxyDto })
  @ApiUnprocessableEntityResponse({ description: DOES_NOT_COMPILE })
  patch(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @Body() dto: PatchProxyDto,
  ): Promise<ProxyDto> {
    return this.proxies.patch(p, id, definedFields(dto));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('proxy:delete')
  @ApiOperation({ summary: 'Delete a proxy' })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.proxies.delete(p, id);
  }
}
