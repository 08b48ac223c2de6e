import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Allow } from 'class-validator';
import { AsSent, HandValidated } from '../../common/validation';

/**
 * Documents the create body; ClientKeysService opens `encrypted` and TokenBuilder.intentOf validates type and
 * data as POST /tokens does.
 */
@HandValidated()
export class CreateTokenIntentDto {
  @ApiProperty({ enum: ['card', 'bank', 'token'], example: 'card' })
  @Allow()
  type: unknown;

  @ApiPropertyOptional({
    oneOf: [{ type: 'object' }, { type: 'array', items: {} }, { type: 'string' }, { type: 'number' }],
    example: { number: '4242424242424242', expiration_month: 12, expiration_year: 2030, cvc: '123' },
    description:
      "The sensitive data, valid for the type as a token's (card: number, expiration, cvc). Required unless " +
      '`encrypted` is sent.',
  })
  @AsSent()
  @Allow()
  data: unknown;

  @ApiPropertyOptional({
    description:
      'Instead of `data`: the data as a JWE compact string a page made with a client encryption key ' +
      '(POST /keys; alg ECDH-ES, enc A256GCM, kid = key_id), opened as on POST /tokens.',
  })
  @Allow()
  encrypted?: unknown;
}

export class TokenIntentCardDto {
  @ApiProperty({ example: '42424242', description: 'First 8 digits (6 for numbers shorter than 16).' })
  bin: string;
  @ApiProperty({ example: '4242' }) last4: string;
  @ApiProperty({ example: 'visa' }) brand: string;
  @ApiPropertyOptional({ example: 12 }) expiration_month?: number;
  @ApiPropertyOptional({ example: 2030 }) expiration_year?: number;
}

export class TokenIntentBankDto {
  @ApiProperty({ example: '110000000' }) routing_number: string;
  @ApiProperty({ example: '6789' }) account_number_last4: string;
}

export class TokenIntentDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty({ enum: ['card', 'bank', 'token'] }) type: string;
  @ApiPropertyOptional({ type: TokenIntentCardDto, description: 'Card intents only.' })
  card?: TokenIntentCardDto;
  @ApiPropertyOptional({ type: TokenIntentBankDto, description: 'Bank intents only.' })
  bank?: TokenIntentBankDto;
  @ApiProperty({ description: 'The fingerprint the token made of this intent gets by default.' })
  fingerprint: string;
  @ApiProperty({ format: 'uuid', nullable: true, type: String }) created_by: string | null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time', description: '24 hours after creation.' }) expires_at: string;
}
