import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, IsString, IsUUID } from 'class-validator';
import { Transform } from '../../access/access-rules';
import * as Rule from '../../access/access-rule-fields';
import { PageQueryDto, PaginationDto } from '../../common/pagination';
import { ToArray } from '../../common/query';
import { APPLICATION_TYPES, ApplicationType } from '../../access/application-type';
import { DisplayName } from '../../common/display-name';

export class AccessRuleDto {
  @Rule.Description()
  description?: string | null;

  @Rule.Priority()
  priority: number;

  @ApiProperty({ example: '/pci/', description: 'Container prefix the rule covers.' })
  @IsString()
  container: string;

  @Rule.Transform()
  transform: Transform;

  @Rule.Permissions()
  permissions: string[];
}

export class UpdateApplicationDto {
  @ApiProperty({ maxLength: 200 })
  @DisplayName()
  name: string;

  @Rule.PermissionList(['token:create', 'token:read'])
  permissions?: string[];

  @Rule.List(AccessRuleDto)
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
