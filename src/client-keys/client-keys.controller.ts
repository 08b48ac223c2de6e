import { Body, Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { CurrentPrincipal, Route } from '../access/decorators';
import { Principal } from '../access/principal';
import { UuidParam } from '../common/uuid-param';
import { IdempotentWrites } from '../idempotency/idempotent-writes';
import { ClientKeysService } from './client-keys.service';
import { ClientKeyDto, CreateClientKeyDto, CreatedClientKeyDto } from './dto/client-key.dto';

const CREATE =
  "The vault generates an X25519 key pair, keeps the private key sealed under the tenant's keys and " +
  'answers the public key (only here). A browser encrypts token data to it (JWE ECDH-ES + A256GCM, ' +
  '`kid` = `key_id`) and sends that as `encrypted` to POST /token-intents, or the backend sends it to ' +
  'POST /tokens or /tokenize.';

@ApiTags('Client encryption keys')
@IdempotentWrites()
@Controller('keys')
export class ClientKeysController {
  constructor(private readonly keys: ClientKeysService) {}

  @Post()
  @Route(
    'keys:create',
    'Create a client encryption key',
    CREATE,
    ApiCreatedResponse({ type: CreatedClientKeyDto }),
  )
  create(@CurrentPrincipal() p: Principal, @Body() dto: CreateClientKeyDto): Promise<CreatedClientKeyDto> {
    return this.keys.create(p, dto);
  }

  @Get()
  @Route(
    'keys:read',
    'List client encryption keys',
    'Oldest first; no key material.',
    ApiOkResponse({ type: [ClientKeyDto] }),
  )
  list(@CurrentPrincipal() p: Principal): Promise<ClientKeyDto[]> {
    return this.keys.list(p);
  }

  @Get(':id')
  @Route(
    'keys:read',
    'Get a client encryption key',
    'No key material.',
    ApiOkResponse({ type: ClientKeyDto }),
  )
  get(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<ClientKeyDto> {
    return this.keys.get(p, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @Route(
    'keys:delete',
    'Delete a client encryption key',
    'Its private key is destroyed: data encrypted to it can no longer be tokenized.',
    ApiNoContentResponse(),
  )
  delete(@CurrentPrincipal() p: Principal, @UuidParam() id: string): Promise<void> {
    return this.keys.delete(p, id);
  }
}
