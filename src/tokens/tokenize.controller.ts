import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiConflictResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { TokenizeService } from './tokenize.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Tokens')
@IdempotentWrites()
@Controller('tokenize')
export class TokenizeController {
  constructor(private readonly tokenize: TokenizeService) {}

  @Post()
  @HttpCode(200)
  // Serialized here: Express would send a top-level string result as text/html.
  @Header('Content-Type', 'application/json; charset=utf-8')
  @RequirePermission('token:create')
  @ApiOperation({
    summary: 'Tokenize a JSON document',
    description:
      'Objects with type and data become tokens (answered masked), other string, number and boolean leaves token ids. All or nothing.',
  })
  @ApiBody({
    description:
      'Any JSON value. Objects with `type` and `data` are token definitions (as POST /tokens); every other string, number or boolean becomes a `token` token.',
    schema: { example: { card: { type: 'card', data: { number: '4242424242424242' } }, ssn: '123-45-6789' } },
    // Here, not in openapi-examples.ts (examples by DTO): this body has no DTO.
    examples: {
      document: {
        summary: 'A nested document: leaves become token ids, definitions tokens',
        value: {
          customer: { name: 'Jane Doe', email: 'jane@example.com' },
          card: {
            type: 'card',
            data: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' },
          },
          bank: { type: 'bank', data: { routing_number: '021000021', account_number: '000123456789' } },
        },
      },
    },
  })
  @ApiOkResponse({
    description: 'The same shape: definitions replaced by token objects (masked), other leaves by token ids.',
  })
  @ApiConflictResponse()
  async run(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<string> {
    return JSON.stringify(await this.tokenize.tokenize(p, body));
  }
}
