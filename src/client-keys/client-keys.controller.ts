import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
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
import { IdempotentWrites } from '../idempotency/idempotent-writes';
import { ClientKeysService } from './client-keys.service';
import { ClientKeyDto, CreateClientKeyDto, CreatedClientKeyDto } from './dto/client-key.dto';

@ApiTags('Client encryption keys')
@IdempotentWrites()
@Controller('keys')
export class ClientKeysController {
  constructor(private readonly keys: ClientKeysService) {}

  @Post()
  @RequirePermission('keys:create')
  @ApiOperation({
    summary: 'Create a client encryption key',
    description:
      "The vault generates an X25519 key pair, keeps the private key sealed under the tenant's keys and " +
      'answers the public key (only here). A browser encrypts token data to it (JWE ECDH-ES + A256GCM, ' +
      '`kid` = `key_id`) and the backend sends that as `encrypted` to POST /tokens or /tokenize.',
  })
  @ApiCreatedResponse({ type: CreatedClientKeyDto })
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateClientKeyDto): Promise<CreatedClientKeyDto> {
    return this.keys.create(p, dto);
  }

  @Get()
  @RequirePermission('keys:read')
  @ApiOperation({ summary: 'List client encryption keys', description: 'Oldest first; no key material.' })
  @ApiOkResponse({ type: [ClientKeyDto] })
  list(@CurrentPrincipal() p: Principal): Promise<ClientKeyDto[]> {
    return this.keys.list(p);
  }

  @Get(':id')
  @RequirePermission('keys:read')
  @ApiOperation({ summary: 'Get a client encryption key', description: 'No key material.' })
  @ApiOkResponse({ type: ClientKeyDto })
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ClientKeyDto> {
    return this.keys.get(p, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequirePermission('keys:delete')
  @ApiOperation({
    summary: 'Delete a client encryption key',
    description: 'Its private key is destroyed: data encrypted to it can no longer be tokenized.',
  })
  @ApiNoContentResponse()
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.keys.delete(p, id);
  }
}
