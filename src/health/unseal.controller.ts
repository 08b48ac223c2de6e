import { Body, Controller, HttpCode, Post } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
} from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Public } from '../access/decorators';
import { TenantKeysService } from '../crypto/tenant-keys.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';

export class UnsealShareDto {
  @ApiProperty({
    description: 'One Shamir share of the master keys, as `keys:split` printed it (tvs1.<base64url>).',
  })
  @IsString()
  @MaxLength(500)
  share: string;
}

export class UnsealStatusDto {
  @ApiProperty({ description: 'Whether the vault is still sealed.' })
  sealed: boolean;

  @ApiProperty({ description: 'Shares received so far while sealed (0 once unsealed).' })
  shares_received: number;
}

@ApiTags('Health')
@Public()
@IdempotentWrites()
@Controller('unseal')
export class UnsealController {
  constructor(private readonly keys: TenantKeysService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Give one unseal share',
    description:
      'Only when the vault started sealed (VAULT_SEALED=true): each key holder gives one Shamir share of the master keys (`npm run cli -- unseal`). Once enough shares combine into master keys that open the tenant keys the vault is unsealed; until then data routes answer 503. The share is the credential: no key needed. On an unsealed vault it changes nothing.',
  })
  @ApiOkResponse({ type: UnsealStatusDto })
  @ApiBadRequestResponse({ description: 'Not a share.' })
  @ApiConflictResponse({
    description: 'The shares give master keys that do not open the tenant keys; all dropped.',
  })
  unseal(@Body() dto: UnsealShareDto): Promise<UnsealStatusDto> {
    return this.keys.unseal(dto.share);
  }
}
