import { ApiProperty, ApiPropertyOptional, OmitType } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { IdAndNameQueryDto, PaginationDto } from '../../common/pagination';
import { AsSent } from '../../common/validation';
import { MAX_CODE_LENGTH, ReactorFormulaDto } from '../../reactor-formulas/dto/reactor-formula.dto';
import { DisplayName } from '../../common/display-name';
import { ApplicationDto } from '../../applications/dto/application.dto';
import { ReactorRuntimeDto, ReactorRuntimeViewDto } from './reactor-runtime.dto';

const EXAMPLE_CODE = `module.exports = async function (req) {
  const { args, configuration } = req;
  return { raw: { amount: args.amount, currency: configuration.currency } };
};`;

export class IdRefDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  id: string;
}

/**
 * Create and replace body. A reactor runs either a formula (`formula.id`, configuration by the formula's
 * names and types) or its own `code` (configuration a map of strings, optional `runtime`): exactly one.
 */
export class ReactorBodyDto {
  @ApiProperty({ maxLength: 200, example: 'Charge with Acme Payments' })
  @DisplayName()
  name: string;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    example: { currency: 'USD' },
    description:
      "Formula reactors (required): the formula's configuration by name and type. Code reactors: a map of " +
      'strings. Stored encrypted.',
  })
  @IsOptional()
  @IsObject()
  @AsSent()
  configuration?: Record<string, unknown>;

  @ApiPropertyOptional({ type: IdRefDto, nullable: true, description: 'A public or private application.' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  application?: IdRefDto | null;

  @ApiPropertyOptional({
    type: IdRefDto,
    description: 'The formula to run (formula reactors). Fixed at creation.',
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  formula?: IdRefDto;

  @ApiPropertyOptional({
    maxLength: MAX_CODE_LENGTH,
    example: EXAMPLE_CODE,
    description:
      'Code reactors: CommonJS exporting an async function of `{ args, configuration, bt }` that returns ' +
      '`{ raw, tokenize }`. Runs in the same sandbox as formulas.',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_LENGTH)
  code?: string;

  @ApiPropertyOptional({ type: ReactorRuntimeDto, description: 'Code reactors only.' })
  @IsOptional()
  @IsObject()
  @AsSent()
  runtime?: Record<string, unknown>;
}

/**
 * PATCH body (application/merge-patch+json, RFC 7386): `configuration` and `runtime` merge, the other
 * fields replace; null removes a field (the application, a configuration entry).
 */
export class PatchReactorDto {
  @ApiPropertyOptional({ maxLength: 200 })
  @IsOptional()
  @DisplayName()
  name?: string | null;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, nullable: true })
  @IsOptional()
  @IsObject()
  @AsSent()
  configuration?: Record<string, unknown> | null;

  @ApiPropertyOptional({ type: IdRefDto, nullable: true })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  application?: IdRefDto | null;

  @ApiPropertyOptional({ maxLength: MAX_CODE_LENGTH, description: 'Code reactors only.' })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_LENGTH)
  code?: string | null;

  @ApiPropertyOptional({ type: ReactorRuntimeDto, nullable: true })
  @IsOptional()
  @IsObject()
  @AsSent()
  runtime?: Record<string, unknown> | null;
}

export class ListReactorsQueryDto extends IdAndNameQueryDto {}

/** The application the reactor runs as, as GET /applications/{id} shows it (never with a key). */
export class ReactorApplicationDto extends OmitType(ApplicationDto, ['key'] as const) {}

export class ReactorDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['active'], description: 'Reactors run as soon as they are saved.' }) state: string;
  @ApiPropertyOptional({ type: ReactorFormulaDto, nullable: true, description: 'null for code reactors.' })
  formula: ReactorFormulaDto | null;
  @ApiPropertyOptional({ nullable: true, description: 'null for formula reactors.' }) code: string | null;
  @ApiPropertyOptional({ type: ReactorRuntimeViewDto, nullable: true, description: 'Code reactors.' })
  runtime: ReactorRuntimeViewDto | null;
  @ApiProperty({ type: 'object', additionalProperties: true }) configuration: Record<string, unknown>;
  @ApiPropertyOptional({ type: ReactorApplicationDto, nullable: true })
  application: ReactorApplicationDto | null;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class ReactorPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [ReactorDto] }) data: ReactorDto[];
}
