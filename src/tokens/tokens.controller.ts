import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBody,
  ApiConflictResponse,
  ApiConsumes,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { RequireContentType } from '../common/content-type.guard';
import { Page } from '../common/pagination';
import {
  CreateTokenDto,
  listTokensQuery,
  SearchTokensDto,
  TokenDto,
  TokenPageDto,
  UpdateTokenDto,
} from './dto/token.dto';
import { TokenIntentConversion } from './token-intent-conversion.service';
import { TokenUpdates } from './token-updates.service';
import { TokensService } from './tokens.service';
import { definedTopLevelFields } from '../common/defined-fields';
import { Discloses } from '../idempotency/discloses';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

const METADATA_PREFIX = 'metadata.';

@ApiTags('Tokens')
@IdempotentWrites()
@Controller('tokens')
export class TokensController {
  constructor(
    private readonly tokens: TokensService,
    private readonly updates: TokenUpdates,
    private readonly intents: TokenIntentConversion,
  ) {}

  @Post()
  @RequirePermission('token:create')
  @ApiOperation({
    summary: 'Create a token',
    description:
      'Card, bank or any JSON. The answer masks the data; defaults per type fill mask, containers and fingerprint. ' +
      'With `token_intent_id` instead of `type` and `data`, the token is made of that token intent, which is ' +
      'deleted with it (400 on `token_intent_id` once it is converted, expired, or of another tenant).',
  })
  @ApiCreatedResponse({ type: TokenDto, description: 'The token, data masked.' })
  @ApiConflictResponse()
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateTokenDto): Promise<TokenDto> {
    const body = definedTopLevelFields(dto);
    return body.token_intent_id === undefined ? this.tokens.create(p, body) : this.intents.create(p, body);
  }

  @Get()
  @RequirePermission('token:read')
  @ApiOperation({
    summary: 'List tokens',
    description:
      'Newest first. Filter by `id`, `type` (repeatable) and `metadata.<key>=<value>` (case-insensitive, ANDed).',
  })
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
    return this.tokens.list(p, listTokensQuery(query), metadata);
  }

  @Post('search')
  @HttpCode(200)
  @Discloses()
  @RequirePermission('token:search')
  @ApiOperation({
    summary: 'Search tokens',
    description: 'Terms `data:<indexed value>`, `id:<id>`, `type:<type>`, `metadata.<key>:<value>`, ANDed.',
  })
  @ApiOkResponse({ type: TokenPageDto })
  search(@CurrentPrincipal() p: Principal, @Body() dto: SearchTokensDto): Promise<Page<TokenDto>> {
    return this.tokens.search(p, dto);
  }

  @Get(':id')
  @RequirePermission('token:read')
  @ApiOperation({
    summary: 'Get a token',
    description: "Data as the application's access rules show it: revealed, masked or absent.",
  })
  @ApiOkResponse({ type: TokenDto })
  get(@CurrentPrincipal() p: Principal, @Param('id') id: string): Promise<TokenDto> {
    return this.tokens.get(p, id);
  }

  @Patch(':id')
  @RequirePermission('token:update')
  @RequireContentType('application/merge-patch+json')
  @ApiOperation({
    summary: 'Update a token',
    description:
      'Content-Type application/merge-patch+json (RFC 7386): data, mask and metadata merge, other fields replace.',
  })
  @ApiConsumes('application/merge-patch+json')
  @ApiBody({ type: UpdateTokenDto, description: 'application/merge-patch+json (RFC 7386)' })
  @ApiOkResponse({ type: TokenDto })
  @ApiConflictResponse()
  update(
    @CurrentPrincipal() p: Principal,
    @Param('id') id: string,
    @Body() dto: UpdateTokenDto,
  ): Promise<TokenDto> {
    return this.updates.update(p, id, definedTopLevelFields(dto));
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('token:delete')
  @ApiOperation({
    summary: 'Delete a token',
    description: 'Its data is removed; a tombstone remains for audit.',
  })
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
