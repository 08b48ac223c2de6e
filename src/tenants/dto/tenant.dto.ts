import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsObject, IsOptional, IsString, MaxLength } from 'class-validator';
import { DisplayName } from '../../common/display-name';

export class TenantDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true, description: 'The user who owns the tenant.' })
  owner_id: string | null;
  @ApiProperty() name: string;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) settings: Record<string, string>;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class UpdateTenantDto {
  @ApiProperty({ maxLength: 200 })
  @DisplayName()
  name: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string' },
    description: 'String values, at most 50 keys; replaces the settings (absent: kept).',
  })
  @IsOptional()
  @IsObject()
  settings?: Record<string, unknown>;
}

export class SecurityContactDto {
  @ApiProperty({ example: 'security@example.com', maxLength: 254 })
  @IsString()
  @MaxLength(254)
  @IsEmail({ allow_display_name: false, require_tld: true, allow_ip_domain: false })
  email: string;
}

export class SecurityContactResponseDto {
  @ApiPropertyOptional({ nullable: true }) email: string | null;
}

export class TokenTypeUsageDto {
  @ApiProperty() count: number;
  @ApiPropertyOptional({ nullable: true }) last_created_at: string | null;
}

export class TokenUsageReportDto {
  @ApiProperty({ type: 'object', additionalProperties: { $ref: '#/components/schemas/TokenTypeUsageDto' } })
  metrics_by_type: Record<string, TokenTypeUsageDto>;
  @ApiProperty({ description: 'Live tokens of the tenant (as `total_tokens` of the report).' })
  total_tokens: number;
  @ApiProperty({ description: 'Live tokens created or changed since the start of this month (UTC).' })
  monthly_active_tokens: number;
  @ApiProperty({
    description:
      'Active tokens the plan includes. A self-hosted vault has no plan and no limit: every active token is included, so this equals `monthly_active_tokens`.',
  })
  included_monthly_active_tokens: number;
}

export class TenantUsageReportDto {
  @ApiProperty({ description: 'Live tokens of the tenant.' }) total_tokens: number;
  @ApiProperty({ type: TokenUsageReportDto }) token_report: TokenUsageReportDto;
}
