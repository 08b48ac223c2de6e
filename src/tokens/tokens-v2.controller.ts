import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { ListTokensV2QueryDto, SearchTokensV2Dto, TokenCursorPageDto } from './dto/token-v2.dto';
import { TokensV2Service } from './tokens-v2.service';
import { Discloses } from '../idempotency/discloses';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Tokens')
@IdempotentWrites()
@Controller('v2/tokens')
export class TokensV2Controller {
  constructor(private readonly tokens: TokensV2Service) {}

  @Get()
  @RequirePermission('token:read')
  @ApiOperation({
    summary: 'List tokens (cursor pages)',
    description:
      'Newest first, as GET /tokens, filtered by `type`, `container`, `fingerprint` and `metadata` (a JSON object). ' +
      'Pass `pagination.next` as `start` for the next page; cursors are signed and belong to one listing.',
  })
  @ApiOkResponse({ type: TokenCursorPageDto })
  list(@CurrentPrincipal() p: Principal, @Query() query: ListTokensV2QueryDto): Promise<TokenCursorPageDto> {
    return this.tokens.list(p, query);
  }

  @Post('search')
  @HttpCode(200)
  @Discloses()
  @RequirePermission('token:search')
  @ApiOperation({
    summary: 'Search tokens (cursor pages)',
    description: 'The query language of POST /tokens/search, paged like GET /v2/tokens.',
  })
  @ApiOkResponse({ type: TokenCursorPageDto })
  search(@CurrentPrincipal() p: Principal, @Body() dto: SearchTokensV2Dto): Promise<TokenCursorPageDto> {
    return this.tokens.search(p, dto);
  }
}
