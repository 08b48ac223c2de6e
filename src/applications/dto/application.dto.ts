import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsObject,
  IsOptional,
  IsString,
  IsUUID,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';
import { TRANSFORMS, Transform } from '../../access/access-rules';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import { ToArray } from '../../common/query';
import { APPLICATION_TYPES, ApplicationType } from '../../access/application-type';
import { DisplayName } from '../../common/display-name';

export class AccessRuleDto {
  @ApiPropertyOptional({ nullable: true, maxLength: 500 })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiProperty({ description: 'Rules are tried in ascending priority.', minimum: 0, maximum: 1000000 })
  @IsInt()
  @Min(0)
  @Max(1000000)
  priority: number;

  @ApiProperty({ example: '/pci/', description: 'Container prefix the rule covers.' })
  @IsString()
  container: string;

  @ApiProperty({ enum: TRANSFORMS })
  @IsIn(TRANSFORMS)
  transform: Transform;

  @ApiProperty({ type: [String], example: ['token:read'] })
  @IsArray()
  @IsString({ each: true })
  permissions: string[];
}

export class UpdateApplicationDto {
  @ApiProperty({ maxLength: 200 })
  @DisplayName()
  name: string;

  @ApiPropertyOptional({ type: [String], example: ['token:create', 'token:read'] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsString({ each: true })
  permissions?: string[];

  @ApiPropertyOptional({ type: [AccessRuleDto] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(100)
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => AccessRuleDto)
  rules?: AccessRuleDto[];
}

export class CreateApplicationDto extends UpdateApplicationDto {
  @ApiProperty({ enum: APPLICATION_TYPES })
  @IsIn(APPLICATION_TYPES)
  type: ApplicationType;

  @ApiPropertyOptional({
    default: true,
    description: 'false: create the application without a key (add one with POST /applications/{id}/keys).',
  })
  @IsOptional()
  @IsBoolean()
  create_key?: boolean;
}

export class ListApplicationsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ type: [String], description: 'Repeatable.' })
  @IsOptional()
  @ToArray()
  @IsUUID('all', { each: true })
  id?: string[];

  @ApiPropertyOptional({ enum: APPLICATION_TYPES, isArray: true, description: 'Repeatable.' })
  @IsOptional()
  @ToArray()
  @IsIn(APPLICATION_TYPES, { each: true })
  type?: ApplicationType[];
}

export class ApplicationDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ format: 'uuid' }) tenant_id: string;
  @ApiProperty() name: string;
  @ApiProperty({ enum: APPLICATION_TYPES }) type: ApplicationType;
  @ApiProperty({ type: [String] }) permissions: string[];
  @ApiProperty({ type: [AccessRuleDto] }) rules: AccessRuleDto[];
  @ApiPropertyOptional({ description: 'The API key: returned only when it is created or regenerated.' })
  key?: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) created_by: string | null;
  @ApiProperty() created_at: string;
  @ApiPropertyOptional({ format: 'uuid', nullable: true }) modified_by: string | null;
  @ApiPropertyOptional({ nullable: true }) modified_at: string | null;
}

export class ApplicationPageDto {
  @ApiProperty({ type: PaginationDto }) pagination: PaginationDto;
  @ApiProperty({ type: [ApplicationDto] }) data: ApplicationDto[];
}

export class PermissionDto {
  @ApiProperty() type: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: [String] }) application_types: string[];
}

export class ListPermissionsQueryDto {
  @ApiPropertyOptional({ enum: APPLICATION_TYPES, description: 'Only the permissions this type may hold.' })
  @IsOptional()
  @IsIn(APPLICATION_TYPES)
  application_type?: ApplicationType;
}
