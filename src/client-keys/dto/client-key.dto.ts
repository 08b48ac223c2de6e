import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional } from 'class-validator';

/** Create body (the SDK's ClientEncryptionKeyRequest). */
export class CreateClientKeyDto {
  @ApiPropertyOptional({
    format: 'date-time',
    example: '2027-05-01T00:00:00Z',
    description: 'When the key stops decrypting: in the future, at most one year away (the default).',
  })
  @IsOptional()
  @IsISO8601({ strict: true })
  expires_at?: string;
}

/** A key as list and get answer it (the SDK's ClientEncryptionKeyMetadataResponse): never a key itself. */
export class ClientKeyDto {
  @ApiProperty({ format: 'uuid', description: 'The `kid` a JWE made with this key names.' })
  key_id: string;

  @ApiProperty({ format: 'date-time' })
  expires_at: string;
}

/** The create answer (the SDK's ClientEncryptionKeyResponse): the only one that carries the public key. */
export class CreatedClientKeyDto extends ClientKeyDto {
  @ApiProperty({
    description:
      'The X25519 public key: its 32 raw bytes, base64, in PEM armour, as the hosted vault answers it. ' +
      'Encrypt with JWE alg ECDH-ES, enc A256GCM and kid = key_id. Shown only here.',
    example:
      '-----BEGIN PUBLIC KEY-----\nWQ4geAENWHyR7+g94nN6lFZzY7YdGWxPtlX/16fJ4z0=\n-----END PUBLIC KEY-----',
  })
  public_key_pem: string;
}
