import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { TokenizeService } from './tokenize.service';

@ApiTags('Tokens')
@Controller('tokenize')
export class TokenizeController {
  constructor(private readonly tokenize: TokenizeService) {}

  @Post()
  @HttpCode(200)
  // Serialized here: Express would send a top-level string result as text/html.
  @Header('Content-Type', 'application/json; charset=utf-8')
  @RequirePermission('token:create')
  @ApiBody({
    description:
      'Any JSON value. Objects with `type` and `data` are token definitions (as POST /tokens); every other string, number or boolean becomes a `token` token.',
    schema: { example: { card: { type: 'card', data: { number: '4242424242424242' } }, ssn: '123-45-6789' } },
  })
  @ApiOkResponse({
    description: 'The same shape: definitions replaced by token objects (masked), other leaves by token ids.',
  })
  async run(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<string> {
    return JSON.stringify(await this.tokenize.tokenize(p, body));
  }
}
