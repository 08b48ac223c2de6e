import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsObject, IsOptional, IsUUID, ValidateNested } from 'class-validator';
import { IdAndNameQueryDto, PaginationDto } from '../../common/pagination';
import { AsSent } from '../../common/validation';
import { ReactorFormulaDto } from '../../reactor-formulas/dto/reactor-formula.dto';
import { DisplayName } from '../../common/display-name';

export class IdRefDto {
  @ApiProperty({ format: 'uuid' })
  @IsUUID('all')
  id: string;
}

class ReactorFieldsDto {
  @ApiProperty({ maxLength: 200, example: 'Charge with Acme Payments' })
  @DisplayName()
  name: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { currency: 'USD' },
    description: "Values for the formula's configuration, by name and type. Stored encrypted.",
  })
  @IsObject()
  @AsSent()
  configuration: Record<string, unknown>;

  @ApiPropertyOptional({ type: IdRefDto, nullable: true, description: 'A public or private application.' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  application?: IdRefDto | null;
}

/** Update body: the formula is fixed at creation (a different `formula.id` answers 400). */
export class UpdateReactorDto extends ReactorFieldsDto {
  @ApiPropertyOptional({ type: IdRefDto, description: 'Accepted only when it names the current formula.' })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  formula?: IdRefDto;
}

export class CreateReactorDto extends ReactorFieldsDto {
  @ApiProperty({ type: IdRefDto })
  @IsObject()
  @ValidateNested()
  @Type(() => IdRefDto)
  formula: IdRefDto;
}

export class ListReactorsQueryDto extends IdAndNameQueryDto {}

export class ReactorApplicationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: ['public', 'private'] }) type: string;
}

export class ReactorDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: ReactorFormulaDto }) formula: ReactorFormulaDto;
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
