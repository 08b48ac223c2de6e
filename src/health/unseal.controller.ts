import { Body, Controller, HttpCode, Post, UseGuards } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiOkResponse,
  ApiOperation,
  ApiProperty,
  ApiTags,
  ApiTooManyRequestsResponse,
} from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { Public } from '../access/decorators';
import { UnsealShares } from '../crypto/unseal-shares.service';
import { IdempotentWrites } from '../idempotency/idempotent-writes';
import { UnsealRateLimit } from './unseal-rate-limit';

export class UnsealShareDto {
  @ApiProperty({
    description:
      'One Shamir share of the master keys, as `keys:split` printed it (tvs2.<split>.<index>.<threshold>.<base64url>).',
  })
  @IsString()
  @MaxLength(1500)
  share: string;
}

export class UnsealStatusDto {
  @ApiProperty({ description: 'Whether the vault is still sealed.' })
  sealed: boolean;

  @ApiProperty({ description: 'Checked shares held so far while sealed, one per index (0 once unsealed).' })
  shares_received: number;
}

@ApiTags('Health')
@Public()
@IdempotentWrites()
@UseGuards(UnsealRateLimit)
@Controller('unseal')
@ApiTooManyRequestsResponse({
  description: 'Too many unseal requests from this address (RATE_LIMIT_UNSEAL).',
})
export class UnsealController {
  constructor(private readonly shares: UnsealShares) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'Give one unseal share',
    description:
      'Only when the vault started sealed (VAULT_SEALED=true): each key holder gives one Shamir share of the master keys (`npm run cli -- unseal`). Each share is checked on its own against the split `keys:split` recorded (its split, index, threshold and digest): any other text is refused with 400 and not kept. The same share twice counts once. Once threshold shares are held they combine into the master keys and the vault is unsealed; until then data routes answer 503. The share is the credential: no key needed. On an unsealed vault it changes nothing.',
  })
  @ApiOkResponse({ type: UnsealStatusDto })
  @ApiBadRequestResponse({ description: 'Not a share of the split recorded by keys:split.' })
  @ApiConflictResponse({
    description: 'The shares give master keys that do not open the tenant keys; all dropped.',
  })
  unseal(@Body() dto: UnsealShareDto): Promise<UnsealStatusDto> {
    return this.shares.give(dto.share);
  }

  @Post('reset')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Drop the held unseal shares',
    description:
      'While sealed: drops every share held so far, so an unseal starts again (`npm run cli -- unseal:reset`). A share of the recorded split is the credential; it is not kept.',
  })
  @ApiOkResponse({ type: UnsealStatusDto })
  @ApiBadRequestResponse({ description: 'Not a share of the split recorded by keys:split.' })
  reset(@Body() dto: UnsealShareDto): Promise<UnsealStatusDto> {
    return this.shares.reset(dto.share);
  }
}
