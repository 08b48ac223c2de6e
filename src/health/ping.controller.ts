import { Controller, Get, HttpCode } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '../access/decorators';

/** The hosted vault's `GET /ping`, which node-sdk calls as `webhooks.ping()`. */
@ApiTags('Health')
@Public()
@Controller('ping')
export class PingController {
  @Get()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Ping',
    description:
      'The vault is up: 200 with an empty body, nothing checked, no key needed (node-sdk `webhooks.ping()`). Sends no webhook event.',
  })
  @ApiOkResponse({ description: 'The vault is up.' })
  ping(): void {}
}
