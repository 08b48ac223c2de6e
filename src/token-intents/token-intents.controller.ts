import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { CreateTokenIntentDto, TokenIntentDto } from './dto/token-intent.dto';
import { ApiResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Route } from '../access/decorators';
import { TokenIntentsService } from './token-intents.service';
import { Principal } from '../access/principal';
import { UuidParam } from '../common/uuid-param';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

const CREATE =
  'Data collected by a page (a public application may create one), stored sealed for 24 hours until a ' +
  'backend converts it with `POST /tokens` and `token_intent_id`. The answer shows card or bank details, ' +
  'never the data.';

@ApiTags('Token Intents')
@IdempotentWrites()
@Controller('token-intents')
export class TokenIntentsController {
  constructor(private readonly intents: TokenIntentsService) {}

  @Post()
  @Route(
    'token-intent:create',
    'Create a token intent',
    CREATE,
    ApiResponse({ status: 201, type: TokenIntentDto }),
  )
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateTokenIntentDto): Promise<TokenIntentDto> {
    return this.intents.create(p, dto);
  }

  @Get(':id')
  @Route(
    'token-intent:read',
    'Get a token intent',
    '404 once converted, deleted or expired.',
    ApiResponse({ status: 200, type: TokenIntentDto }),
  )
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<TokenIntentDto> {
    return this.intents.get(p, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @Route(
    'token-intent:delete',
    'Delete a token intent',
    'Its sealed data goes at once.',
    ApiResponse({ status: 204 }),
  )
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.intents.delete(p, id);
  }
}
