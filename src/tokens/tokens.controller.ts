import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { RequireContentType } from '../common/content-type.guard';
import { Page } from '../common/pagination';
import { validatePlain } from '../common/validation';
import {
  CreateTokenDto,
  ListTokensQueryDto,
  SearchTokensDto,
  TokenDto,
  TokenPageDto,
  UpdateTokenDto,
} from './dto/token.dto';
import { TokensService } from './tokens.service';

const METADATA_PREFIX = 'metadata.';

@ApiTags('Tokens')
@Controller('tokens')
export class TokensController {
  constructor(private readonly tokens: TokensService) {}

  @Post()
  @RequirePermission('token:create')
  @ApiCreatedResponse({ type: TokenDto, description: 'The token, data masked.' })
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateTokenDto): Promise<TokenDto> {
    return this.tokens.create(p, definedFields(dto));
  }

  @Get()
  @RequirePermission('token:read')
  @ApiQuery({ name: 'id', required: false, isArray: true, type: String })
  @ApiQuery({ name: 'type', required: false, isArray: true, enum: ['token', 'card', 'bank'] })
  @ApiQuery({
    name: 'metadata.<key>',
    required: false,
    description: 'Case-insensitive exact match; several are ANDed.',
  })
  @ApiQuery({ name: 'page', required: false, type: Number })
  @ApiQuery({ name: 'size', required: false, type: Number })
  @ApiOkResponse({ type: TokenPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() raw: Record<string, unknown>): Promise<Page<TokenDto>> {
    const { query, metadata } = splitMetadataFilters(raw);
    return this.tokens.list(p, validatePlain(ListTokensQueryDto, query), metadata);
  }

  @Post('search')
  @HttpCode(200)
  @RequirePermission('token:search')
  @ApiOkResponse({ type: TokenPageDto })
  search(@CurrentPrincipal() p: Principal, @Body() dto: SearchTokensDto): Promise<Page<TokenDto>> {
    return this.tokens.search(p, dto);
  }

  @Get(':id')
  @RequirePermission('token:read')
  @ApiOkResponse({ type: TokenDto })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<TokenDto> {
    return this.tokens.get(p, id);
  }

  @Patch(':id')
  @RequirePermission('token:update')
  @RequireContentType('application/merge-patch+json')
  @ApiBody({ type: UpdateTokenDto, description: 'application/merge-patch+json (RFC 7386)' })
  @ApiOkResponse({ type: TokenDto })
  update(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() dto: UpdateTokenDto,
  ): Promise<TokenDto> {
    return this.tokens.update(p, id, definedFields(dto));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('token:delete')
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<void> {
    return this.tokens.delete(p, id);
  }
}

/** `metadata.<key>=value` filters; a key given more than once is ignored (spec §4.2). */
function splitMetadataFilters(raw: Record<string, unknown>): {
  query: Record<string, unknown>;
  metadata: Record<string, string>;
} {
  const query: Record<string, unknown> = {};
  const metadata = new Map<string, string>();
  for (const [key, value] of Object.entries(raw)) {
    if (!key.startsWith(METADATA_PREFIX)) {
      query[key] = value;
    } else if (typeof value === 'string' && key.length > METADATA_PREFIX.length) {
      metadata.set(key.slice(METADATA_PREFIX.length), value);
    }
  }
  // fromEntries defines own properties: a `metadata.__proto__` filter stays a filter instead of being dropped
  return { query, metadata: Object.fromEntries(metadata) };
}

/** DTO instances carry every declared field (undefined when absent); the rules need only what was sent. */
function definedFields(dto: object): Record<string, unknown> {
  return Object.fromEntries(Object.entries(dto).filter(([, v]) => v !== undefined));
}
