import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import {
  FORMULA_STATUSES,
  FORMULA_TYPES,
  FormulaStatus,
  FormulaType,
  PARAMETER_TYPES,
  ParameterType,
} from '../reactor-formula.entity';
import { DisplayName } from '../../common/display-name';

export const MAX_CODE_LENGTH = 50_000;
export const MAX_ICON_LENGTH = 300_000;

const EXAMPLE_CODE = `module.exports = async function (req) {
  const { card } = req.args;
  return { raw: { last4: card.number.slice(-4), currency: req.configuration.currency } };
};`;

export class FormulaConfigurationDto {
  @ApiProperty({ example: 'currency', maxLength: 200, description: 'No dots: configuration is flat.' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 1000 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string | null;

  @ApiProperty({ enum: PARAMETER_TYPES })
  @IsIn(PARAMETER_TYPES)
  type: ParameterType;
}

export class FormulaRequestParameterDto {
  @ApiProperty({ example: 'card.number', maxLength: 200, description: 'Nested properties as parent.child.' })
  @IsString()
  @MinLength(1)
  @MaxLength(200)
  name: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 1000 })
  @IsOptional()
  @IsString()
  @MaxLength(1000)
  description?: string | null;

  @ApiProperty({ enum: PARAMETER_TYPES })
  @IsIn(PARAMETER_TYPES)
  type: ParameterType;

  @ApiPropertyOptional({ default: false })
  @IsOptional()
  @IsBoolean()
  optional?: boolean;
}

/** Create and update body (spec §4.3). */
export class ReactorFormulaBodyDto {
  @ApiProperty({ maxLength: 200, example: 'Card last four' })
  @DisplayName()
  name: string;

  @ApiPropertyOptional({ nullable: true, maxLength: 2000, example: 'Returns the last four digits.' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  description?: string | null;

  @ApiProperty({ enum: FORMULA_TYPES, example: 'private', description: 'Tenants create private formulas.' })
  @IsIn(FORMULA_TYPES)
  type: FormulaType;

  @ApiPropertyOptional({ enum: FORMULA_STATUSES, default: 'verified' })
  @IsOptional()
  @IsIn(FORMULA_STATUSES)
  status?: FormulaStatus;

  @ApiPropertyOptional({
    nullable: true,
    description: 'A data URL of a PNG or JPEG image (data:image/png;base64,...).',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_ICON_LENGTH)
  icon?: string | null;

  @ApiProperty({ maxLength: MAX_CODE_LENGTH, example: EXAMPLE_CODE })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_CODE_LENGTH)
  code: string;

  @ApiProperty({
    type: [FormulaConfigurationDto],
    example: [{ name: 'currency', description: 'ISO 4217 code', type: 'string' }],
  })
  @IsArray()
  @ArrayMaxSize(100)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => FormulaConfigurationDto)
  configuration: FormulaConfigurationDto[];

  @ApiProperty({
    type: [FormulaRequestParameterDto],
    example: [
      { name: 'card.number', type: 'string' },
      { name: 'amount', type: 'number', optional: true },
    ],
  })
  @IsArray()
  @ArrayMaxSize(200)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => FormulaRequestParameterDto)
  request_parameters: FormulaRequestParameterDto[];
}

export class ListReactorFormulasQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'Name filter: `*` matches anything; without `*`, a substring.' })
  @IsOptional()
  @IsString()
  @MaxLength(200)
  name?: string;
}

export class ReactorFormulaDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiPropertyOptional({ nullable: true }) description: string | null;
  @ApiProperty({ enum: FORMULA_TYPES }) type: FormulaType;
  @ApiProperty({ enum: FORMULA_STATUSES }) status: FormulaStatus;
  @ApiPropertyOptional({ nullable: true }) icon: string | null;
  @ApiProperty() code: string;
  @ApiProperty({ type: [FormulaConfigurationDto] }) configuration: FormulaConfigurationDto[];
  @ApiProperty({ type: [FormulaRequestParameterDto] }) request_parameters: FormulaRequestParameterDto[];
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class ReactorFormulaPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [ReactorFormulaDto] }) data: ReactorFormulaDto[];
}
