import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../access/decorators';
import { Principal } from '../access/principal';
import { UuidParam } from '../common/uuid-param';
import { ApplicationKeysService } from './application-keys.service';
import { ApplicationKeyDto } from './dto/application-key.dto';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

@ApiTags('Applications')
@IdempotentWrites()
@Controller('applications/:id/keys')
export class ApplicationKeysController {
  constructor(private readonly keys: ApplicationKeysService) {}

  @Get()
  @RequirePermission('application:read')
  @ApiOperation({ summary: "List an application's keys", description: 'Never includes the keys themselves.' })
  @ApiOkResponse({ type: [ApplicationKeyDto] })
  list(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ApplicationKeyDto[]> {
    return this.keys.list(p, id);
  }

  @Post()
  @RequirePermission('application:update')
  @ApiOperation({
    summary: 'Create an application key',
    description: 'Adds a key beside the existing ones (rotation); the answer carries the key, once.',
  })
  @ApiCreatedResponse({ type: ApplicationKeyDto })
  create(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ApplicationKeyDto> {
    return this.keys.create(p, id);
  }

  @Get(':keyId')
  @RequirePermission('application:read')
  @ApiOperation({ summary: 'Get an application key', description: 'Never includes the key itself.' })
  @ApiOkResponse({ type: ApplicationKeyDto })
  get(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @UuidParam('keyId') keyId: string,
  ): Promise<ApplicationKeyDto> {
    return this.keys.get(p, id, keyId);
  }

  @Delete(':keyId')
  @HttpCode(204)
  @RequirePermission('application:update')
  @ApiOperation({
    summary: 'Delete an application key',
    description: 'The key stops working at once on every replica; the last key may be deleted too.',
  })
  @ApiNoContentResponse()
  delete(
    @CurrentPrincipal() p: Principal,
    @UuidParam() id: string,
    @UuidParam('keyId') keyId: string,
  ): Promise<void> {
    return this.keys.delete(p, id, keyId);
  }
}
