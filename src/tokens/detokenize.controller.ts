import { Body, Controller, Header, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { DetokenizeService } from './detokenize.service';
import { Discloses } from '../idempotency/discloses';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Tokens')
@IdempotentWrites()
@Controller('detokenize')
export class DetokenizeController {
  constructor(private readonly detokenizer: DetokenizeService) {}

  @Post()
  @HttpCode(200)
  @Discloses()
  // Serialized here: Express would send a top-level string result as text/html.
  @Header('Content-Type', 'application/json; charset=utf-8')
  @RequirePermission('token:use')
  @ApiOperation({
    summary: 'Detokenize a JSON document',
    description:
      'Every detokenization expression (`{{ <id> }}`, `{{ <id> | json: "$.number" }}`, `{{ token: <id> }}`) in the ' +
      'document is replaced by the token data as the token:use access rule shows it (reveal, mask or redact), as ' +
      'reactor arguments and proxy bodies are. At most 100 tokens; an unknown id is a 400, a token outside the ' +
      "caller's token:use rules a 403.",
  })
  @ApiBody({
    description:
      'Any JSON value; strings anywhere inside may hold expressions (object keys are left as they are).',
    schema: { example: { card_number: "{{ 5ff0e61f-3ecd-4b80-9bd1-7e2cb5e2c7a0 | json: '$.number' }}" } },
  })
  @ApiOkResponse({ description: 'The same document with every expression replaced.' })
  async run(@CurrentPrincipal() p: Principal, @Body() body: unknown): Promise<string> {
    return JSON.stringify(await this.detokenizer.detokenize(p, body));
  }
}
